#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/sigv4.h"

static void hexkey(const unsigned char k[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", k[i]);
}

Test(sigv4, signing_key_matches_the_aws_documented_example)
{
	unsigned char k[32];
	char h[65];
	rt_sigv4_signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1",
	                     "iam", k);
	hexkey(k, h);
	cr_expect_str_eq(h, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

Test(sigv4, s3_get_object_example_from_the_aws_docs)
{
	char empty[65];
	rt_sha256_hex("", 0, empty);
	cr_assert_str_eq(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	struct rt_sigv4_header h[] = {
	    {"Host", "examplebucket.s3.amazonaws.com"},
	    {"Range", "bytes=0-9"},
	    {"x-amz-content-sha256", empty},
	    {"X-Amz-Date", "20130524T000000Z"},
	};
	struct rt_sigv4_req r = {"GET",
	                         "/test.txt",
	                         "",
	                         h,
	                         4,
	                         empty,
	                         "20130524T000000Z",
	                         "us-east-1",
	                         "s3",
	                         "AKIAIOSFODNN7EXAMPLE",
	                         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
	struct rt_buf out = {0};
	cr_assert_eq(rt_sigv4_authorization(&r, &out), 0);
	cr_expect_str_eq(out.p,
	                 "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/"
	                 "s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;"
	                 "x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48"
	                 "dd91039c6036bdb41");
	rt_buf_free(&out);
}

Test(sigv4, object_keys_are_uri_encoded_but_slashes_kept)
{
	struct rt_buf b = {0};
	rt_uri_encode(&b, "/bucket/run 1/a+b=c~d_e.f-g/\xc3\xa9$.csv.gz", 0);
	cr_expect_str_eq(b.p, "/bucket/run%201/a%2Bb%3Dc~d_e.f-g/%C3%A9%24.csv.gz");
	rt_buf_free(&b);
}

Test(sigv4, bad_date_is_refused)
{
	struct rt_sigv4_header h[] = {{"host", "x"}};
	struct rt_sigv4_req r = {"PUT", "/", "", h, 1, "x", "2013", "r", "s3", "a", "s"};
	struct rt_buf out = {0};
	cr_expect_eq(rt_sigv4_authorization(&r, &out), -EINVAL);
	rt_buf_free(&out);
}
