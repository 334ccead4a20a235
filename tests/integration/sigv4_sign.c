/*
 * sigv4_sign.c - sign one S3 PUT with rt's SigV4 code, for the botocore
 * cross-check (it_sigv4.sh).
 *
 *   sigv4-sign PATH AMZDATE REGION ACCESS SECRET TOKEN HOST BODYFILE
 *
 * Prints the Authorization header value.
 */
#include <stdio.h>
#include <stdlib.h>

#include "net/sigv4.h"

int main(int argc, char **argv)
{
	if (argc != 9)
		return 2;
	FILE *f = fopen(argv[8], "rb");
	static char body[1 << 20];
	size_t n = f ? fread(body, 1, sizeof(body), f) : 0;
	if (f)
		fclose(f);
	char hash[65];
	rt_sha256_hex(body, n, hash);
	char len[32];
	snprintf(len, sizeof(len), "%zu", n);
	struct rt_sigv4_header h[] = {
	    {"Host", argv[7]},
	    {"x-amz-content-sha256", hash},
	    {"x-amz-date", argv[2]},
	    {"x-amz-security-token", argv[6]},
	};
	struct rt_sigv4_req r = {"PUT",   argv[1], "",   h,       4,      hash,
	                         argv[2], argv[3], "s3", argv[4], argv[5]};
	struct rt_buf out = {0};
	if (rt_sigv4_authorization(&r, &out))
		return 1;
	puts(out.p);
	rt_buf_free(&out);
	return 0;
}
