/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's web configuration file (--web-config): TLS and HTTP
 * basic authentication, in the format of Prometheus' exporter-toolkit, so
 * that a fleet configures this exporter as it does node_exporter:
 *
 *   tls_server_config:
 *     cert_file: /etc/kvm-statsfd/exporter.crt
 *     key_file: /etc/kvm-statsfd/exporter.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...        (bcrypt, as htpasswd -B makes)
 *
 * Only those keys are known; any other is an error, as exporter-toolkit's
 * strict parsing makes it, rather than a setting silently not applied.
 */
#ifndef KVM_EXPORTER_WEB_CONFIG_H
#define KVM_EXPORTER_WEB_CONFIG_H

#include <stddef.h>

struct web_user {
	char *name;
	char *hash;	/* bcrypt: $2a$, $2b$ or $2y$ */
};

struct web_config {
	/* PEM contents, both NULL without tls_server_config. */
	char *cert_pem;
	char *key_pem;
	char *cert_file;
	char *key_file;
	struct web_user *users;
	size_t n_users;
};

/*
 * Read @path into @wc (zeroed first).  0, or -1 with a message naming the
 * file and line in @err.
 */
int web_config_load(const char *path, struct web_config *wc, char *err,
		    size_t errlen);
void web_config_free(struct web_config *wc);

/* The bcrypt hash of @user, or NULL. */
const char *web_config_hash_of(const struct web_config *wc, const char *user);

#endif
