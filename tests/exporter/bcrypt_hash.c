// SPDX-License-Identifier: GPL-2.0
/*
 * bcrypt_hash PASSWORD COST: a bcrypt hash of PASSWORD ($2b$) for the web
 * config test's basic_auth_users, as `htpasswd -nB` would make, without
 * apache2-utils for one line.
 */
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	const char *h;

	if (argc != 3) {
		fputs("usage: bcrypt_hash PASSWORD COST\n", stderr);
		return 2;
	}
	if (!crypt_gensalt_rn("$2b$", strtoul(argv[2], NULL, 10), NULL, 0,
			      salt, sizeof(salt))) {
		perror("crypt_gensalt_rn");
		return 1;
	}
	h = crypt(argv[1], salt);
	if (!h || h[0] == '*') {
		perror("crypt");
		return 1;
	}
	return puts(h) < 0;
}
