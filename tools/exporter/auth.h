/* SPDX-License-Identifier: GPL-2.0 */
/* HTTP basic authentication against the web config's users: see auth.c. */
#ifndef KVM_EXPORTER_AUTH_H
#define KVM_EXPORTER_AUTH_H

#include "web_config.h"

/* Make @wc the users to check against (NULL: none, every request passes). */
int auth_set_users(const struct web_config *wc);
/* 1 if @user with @pass may scrape (or no user is configured), else 0. */
int auth_check(const char *user, const char *pass);
/* Whether users are configured: a request without credentials fails. */
int auth_required(void);
/* Requests refused for their credentials, for kvm_exporter_*. */
unsigned long auth_refused(void);
void auth_count_refused(void);

#endif
