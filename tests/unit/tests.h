/* SPDX-License-Identifier: GPL-2.0 */
#ifndef UNIT_TESTS_H
#define UNIT_TESTS_H

void test_parse(void);
void test_fuzz(void);
void test_fd(void);
void test_tool(void);
void test_discover_again(void);

#include <stdio.h>
/* Documentation/exit-reasons.rst's tables: SVM (vmx 0) or VMX (vmx 1). */
void print_exit_reason_table(FILE *f, int vmx);

#endif
