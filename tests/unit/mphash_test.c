/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * DOC: fib_mphash against the kernel's choices and SipHash's reference
 *
 * The golden vectors are flows whose path Linux 6.18 chose (`ip route
 * get`, captured with MPHASH_GOLDEN=FILE by
 * tests/integration/mphash_kernel.sh, which checks 10,000 such flows
 * when run as root): a 4-path IPv4 route of weights 1,2,5,3 and a 4-path
 * IPv6 route of weights 3,1,4,2, seeds 1 and 0xdeadbeef, policies 0, 1,
 * 2 and 3 (fields 0x37 and 0x22). Each vector holds the kernel's path and
 * the hash fib_mphash gave when it agreed with the kernel on all of
 * them: the path is the kernel's word, the hash pins fib_mphash itself.
 * SRC NULL: an output flow without `from` (the unspecified address is
 * hashed); protocol 0: none named.
 *
 * The test includes fib/mphash.c to reach its SipHash and the struct
 * layout (static there; libfib does not export fib_mphash either).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "fib/mphash.c"
#include "tests/unit/ck_run.h"

struct golden {
	int family;
	uint8_t policy;
	uint32_t fields;
	uint32_t seed;
	const char *src; /* NULL: no `from` */
	const char *dst;
	uint8_t proto;
	uint16_t sport, dport;
	unsigned path; /* the kernel's */
	uint32_t hash;
};

static const struct golden golden[] = {
    {AF_INET, 0, 7, 1u, "10.0.0.1", "198.18.222.214", 1, 59364, 2877, 3, 1788927171u},
    {AF_INET, 0, 7, 1u, "100.122.147.2", "198.18.230.164", 17, 36049, 17638, 1, 450990455u},
    {AF_INET, 0, 7, 1u, "100.127.42.238", "198.18.69.157", 17, 58117, 37407, 3, 2051991307u},
    {AF_INET, 0, 7, 1u, "100.97.236.22", "198.19.0.110", 17, 47467, 49486, 2, 706825179u},
    {AF_INET, 0, 7, 1u, NULL, "198.18.94.172", 0, 0, 0, 2, 937259292u},
    {AF_INET, 0, 7, 1u, "10.0.0.1", "198.18.149.245", 0, 13624, 19854, 2, 1012928592u},
    {AF_INET, 0, 7, 1u, "192.0.2.4", "198.19.101.48", 17, 8453, 44113, 2, 651057205u},
    {AF_INET, 0, 7, 1u, NULL, "198.19.169.79", 0, 42172, 38878, 1, 478686573u},
    {AF_INET, 1, 7, 1u, "10.0.0.1", "198.19.98.100", 17, 33774, 18146, 2, 620318399u},
    {AF_INET, 1, 7, 1u, NULL, "198.19.83.88", 0, 6782, 25362, 1, 427811884u},
    {AF_INET, 1, 7, 1u, "192.0.2.6", "198.19.247.250", 6, 54977, 56590, 2, 1455904629u},
    {AF_INET, 1, 7, 1u, NULL, "198.19.34.67", 0, 21754, 51171, 2, 676513054u},
    {AF_INET, 1, 7, 1u, NULL, "198.19.247.9", 6, 16022, 60191, 2, 1107801619u},
    {AF_INET, 1, 7, 1u, "192.0.2.4", "198.18.36.21", 6, 709, 30916, 2, 863717519u},
    {AF_INET, 1, 7, 1u, NULL, "198.19.18.160", 17, 12250, 63665, 2, 701921015u},
    {AF_INET, 1, 7, 1u, "100.110.141.51", "198.18.162.102", 1, 14100, 32672, 2, 946451907u},
    {AF_INET, 2, 7, 1u, "100.75.84.171", "198.19.106.118", 17, 41540, 1256, 2, 784230982u},
    {AF_INET, 2, 7, 1u, "192.0.2.9", "198.18.193.50", 6, 6380, 17472, 2, 1428912034u},
    {AF_INET, 2, 7, 1u, NULL, "198.18.132.179", 0, 58535, 5468, 2, 881505896u},
    {AF_INET, 2, 7, 1u, "100.89.60.87", "198.19.210.224", 1, 61286, 52661, 0, 153935056u},
    {AF_INET, 2, 7, 1u, "192.0.2.9", "198.18.95.107", 17, 912, 6878, 2, 1270138770u},
    {AF_INET, 2, 7, 1u, NULL, "198.19.60.180", 17, 3919, 9903, 3, 2095003574u},
    {AF_INET, 2, 7, 1u, "10.0.0.1", "198.18.40.229", 1, 26909, 23244, 2, 1037552503u},
    {AF_INET, 2, 7, 1u, "100.72.0.163", "198.18.229.200", 1, 51125, 20499, 3, 2118322925u},
    {AF_INET, 3, 0x37, 1u, NULL, "198.18.69.176", 6, 51415, 41027, 0, 46085442u},
    {AF_INET, 3, 0x37, 1u, "100.92.77.84", "198.19.208.89", 6, 45630, 61225, 3, 2103802973u},
    {AF_INET, 3, 0x37, 1u, "100.126.9.146", "198.19.213.147", 17, 0, 0, 3, 1989322803u},
    {AF_INET, 3, 0x37, 1u, "100.92.27.128", "198.19.28.3", 0, 56467, 41392, 0, 73754775u},
    {AF_INET, 3, 0x37, 1u, NULL, "198.19.135.42", 0, 23876, 6061, 2, 736473945u},
    {AF_INET, 3, 0x37, 1u, NULL, "198.19.136.210", 6, 44599, 60012, 2, 1008175825u},
    {AF_INET, 3, 0x37, 1u, "10.0.0.1", "198.19.180.253", 17, 56558, 55226, 2, 936536483u},
    {AF_INET, 3, 0x37, 1u, "192.0.2.5", "198.18.58.15", 6, 6838, 47703, 2, 596176062u},
    {AF_INET, 3, 0x22, 1u, NULL, "198.18.177.126", 0, 28074, 26580, 3, 1716166706u},
    {AF_INET, 3, 0x22, 1u, "192.0.2.10", "198.19.125.51", 17, 65325, 2121, 0, 148684237u},
    {AF_INET, 3, 0x22, 1u, "10.0.0.1", "198.18.54.203", 1, 33391, 32409, 2, 1046873131u},
    {AF_INET, 3, 0x22, 1u, "10.0.0.1", "198.18.165.150", 0, 24568, 39008, 2, 1448493905u},
    {AF_INET, 3, 0x22, 1u, "100.87.202.102", "198.18.194.117", 0, 56999, 11787, 2, 1392313067u},
    {AF_INET, 3, 0x22, 1u, NULL, "198.18.90.7", 6, 39131, 55291, 1, 561712105u},
    {AF_INET, 3, 0x22, 1u, "10.0.0.1", "198.18.134.130", 17, 15703, 9985, 1, 555317875u},
    {AF_INET, 3, 0x22, 1u, "100.125.179.182", "198.18.86.243", 1, 10399, 30615, 1, 548752658u},
    {AF_INET6, 0, 7, 1u, "2001:db8::1", "2001:db8:100:3f8e:de34::d6b5", 58, 59364, 2877, 0,
     316613474u},
    {AF_INET6, 0, 7, 1u, "2001:db8:ff:ea95::93b7", "2001:db8:100:6230:e6d9::a4af", 17, 36049, 17638,
     0, 366072933u},
    {AF_INET6, 0, 7, 1u, NULL, "2001:db8:100:ea78:47f0::45da", 58, 35030, 58117, 2, 1115997077u},
    {AF_INET6, 0, 7, 1u, "2001:db8:ff:903f::adb6", "2001:db8:100:8503:b96b::c14e", 58, 10934, 61256,
     2, 1672710683u},
    {AF_INET6, 0, 7, 1u, NULL, "2001:db8:100:113c:31d1::c451", 6, 0, 0, 2, 1124311643u},
    {AF_INET6, 0, 7, 1u, "2001:db8::1", "2001:db8:100:6a87:1e56::3538", 0, 26881, 24067, 2,
     1261409857u},
    {AF_INET6, 0, 7, 1u, "2001:db8::1", "2001:db8:100:bd08:94e9::2105", 17, 8112, 38270, 0,
     498056706u},
    {AF_INET6, 0, 7, 1u, "2001:db8:ff:a4bc::97de", "2001:db8:100:3648:1372::3080", 6, 42504, 26044,
     2, 1368076838u},
    {AF_INET6, 1, 7, 1u, "2001:db8::1", "2001:db8:100:c881:62c1::6496", 17, 33774, 18146, 3,
     1940036523u},
    {AF_INET6, 1, 7, 1u, NULL, "2001:db8:100:bb1b:5319::5824", 0, 6782, 25362, 1, 670455484u},
    {AF_INET6, 1, 7, 1u, "2001:db8:ff:5c1d::1977", "2001:db8:100:fe2e:f75c::fb9d", 6, 54977, 56590,
     2, 1492513908u},
    {AF_INET6, 1, 7, 1u, NULL, "2001:db8:100:22c2:42e8::229e", 6, 51171, 38549, 2, 1603543383u},
    {AF_INET6, 1, 7, 1u, "2001:db8::1", "2001:db8:100:f74f:883::bda8", 0, 60191, 52326, 3,
     1948569344u},
    {AF_INET6, 1, 7, 1u, "2001:db8::1", "2001:db8:100:2446:1528::31ab", 0, 30916, 44410, 1,
     666988413u},
    {AF_INET6, 1, 7, 1u, NULL, "2001:db8:100:8bf6:1228::a07f", 17, 12250, 63665, 1, 716638909u},
    {AF_INET6, 1, 7, 1u, "2001:db8:ff:b891::8d5d", "2001:db8:100:79fb:a23d::6672", 58, 14100, 32672,
     2, 1134138641u},
    {AF_INET6, 2, 7, 1u, "2001:db8:ff:2fac::5448", "2001:db8:100:d43b:6a1e::75f4", 17, 41540, 1256,
     2, 1387635475u},
    {AF_INET6, 2, 7, 1u, "2001:db8:ff:3194::809c", "2001:db8:100:904a:7236::c190", 17, 18909, 6380,
     1, 854735074u},
    {AF_INET6, 2, 7, 1u, NULL, "2001:db8:100:7693:84bf::b415", 0, 58535, 5468, 2, 1655351451u},
    {AF_INET6, 2, 7, 1u, "2001:db8:ff:65e5::3cbb", "2001:db8:100:91aa:d29c::e14f", 58, 61286, 52661,
     2, 1299539241u},
    {AF_INET6, 2, 7, 1u, "2001:db8::1", "2001:db8:100:dadf:1c7b::5f1e", 17, 37123, 912, 3,
     1825803498u},
    {AF_INET6, 2, 7, 1u, "2001:db8::1", "2001:db8:100:26ae:bcc2::f3f5", 17, 0, 0, 0, 435510828u},
    {AF_INET6, 2, 7, 1u, NULL, "2001:db8:100:5acb:8b17::5883", 17, 27273, 49353, 0, 538059391u},
    {AF_INET6, 2, 7, 1u, NULL, "2001:db8:100:5013:37d8::1ef9", 58, 59949, 64286, 0, 561500081u},
    {AF_INET6, 3, 0x37, 1u, NULL, "2001:db8:100:7aff:45a9::b081", 6, 51415, 41027, 0, 563653548u},
    {AF_INET6, 3, 0x37, 1u, "2001:db8:ff:7026::4dce", "2001:db8:100:f29e:d0e0::5951", 6, 45630,
     61225, 3, 1826043761u},
    {AF_INET6, 3, 0x37, 1u, "2001:db8::1", "2001:db8:100:33d:9df7::d536", 58, 33988, 57154, 0,
     278087534u},
    {AF_INET6, 3, 0x37, 1u, "2001:db8:ff:bd55::c24e", "2001:db8:100:1d12:dc93::a1b0", 58, 2432,
     37606, 2, 1717244919u},
    {AF_INET6, 3, 0x37, 1u, NULL, "2001:db8:100:250d:ac5::5d44", 0, 29391, 7068, 3, 1913311124u},
    {AF_INET6, 3, 0x37, 1u, NULL, "2001:db8:100:b29:705b::ae37", 58, 46741, 34771, 3, 1745219825u},
    {AF_INET6, 3, 0x37, 1u, "2001:db8:ff:d7ba::5c55", "2001:db8:100:44d4:837c::dcee", 58, 45429,
     34915, 2, 1298363580u},
    {AF_INET6, 3, 0x37, 1u, "2001:db8:ff:3650::3a65", "2001:db8:100:1ab5:ba57::e96b", 17, 65029,
     46935, 2, 961546613u},
    {AF_INET6, 3, 0x22, 1u, NULL, "2001:db8:100:579e:b15d::7e3f", 0, 28074, 26580, 2, 1093925988u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8:ff:9fbe::402f", "2001:db8:100:dc29:7d4d::3308", 17, 65325,
     2121, 2, 1095309589u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8:ff:29fe::5ff8", "2001:db8:100:36b0:cbc2::4496", 17, 32409,
     64520, 0, 350965066u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8:ff:2e0a::bee3", "2001:db8:100:d66c:d85::dea7", 6, 26818,
     42417, 3, 2111023980u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8::1", "2001:db8:100:65d2:383c::47de", 58, 30047, 23572, 3,
     1718033087u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8:ff:3d56::2701", "2001:db8:100:6a5:5b3d::a5f7", 58, 34829,
     24373, 0, 487109314u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8:ff:c627::3625", "2001:db8:100:efbb:289e::7797", 6, 34553,
     33517, 2, 1618591765u},
    {AF_INET6, 3, 0x22, 1u, "2001:db8::1", "2001:db8:100:6a66:f37::810b", 58, 62727, 45860, 0,
     347240665u},
    {AF_INET, 0, 7, 3735928559u, "10.0.0.1", "198.18.254.254", 1, 32549, 32471, 3, 1722122807u},
    {AF_INET, 0, 7, 3735928559u, "100.127.254.125", "198.18.254.252", 1, 32465, 32436, 2,
     1506201712u},
    {AF_INET, 0, 7, 3735928559u, "100.94.251.124", "198.19.124.252", 1, 64701, 64820, 2,
     1375044802u},
    {AF_INET, 0, 7, 3735928559u, "100.94.247.245", "198.18.248.247", 6, 31771, 31212, 2,
     959992447u},
    {AF_INET, 0, 7, 3735928559u, "100.123.115.113", "198.18.117.115", 6, 29850, 30652, 2,
     1070916475u},
    {AF_INET, 0, 7, 3735928559u, "100.90.94.100", "198.19.99.232", 6, 61165, 59493, 1, 353814270u},
    {AF_INET, 0, 7, 3735928559u, "100.83.211.64", "198.18.218.200", 1, 23961, 24662, 2,
     1017898890u},
    {AF_INET, 0, 7, 3735928559u, "100.102.14.165", "198.18.34.53", 6, 46315, 13128, 2, 1328689596u},
    {AF_INET, 1, 7, 3735928559u, "10.0.0.1", "198.18.254.254", 1, 32549, 32471, 3, 2045295748u},
    {AF_INET, 1, 7, 3735928559u, "100.127.254.125", "198.18.254.252", 1, 32465, 32436, 3,
     2140383376u},
    {AF_INET, 1, 7, 3735928559u, "100.94.251.124", "198.19.124.252", 1, 64701, 64820, 3,
     1659962717u},
    {AF_INET, 1, 7, 3735928559u, "100.94.247.245", "198.18.248.247", 6, 31771, 31212, 3,
     1985515509u},
    {AF_INET, 1, 7, 3735928559u, "100.123.115.113", "198.18.117.115", 6, 29850, 30652, 2,
     597271646u},
    {AF_INET, 1, 7, 3735928559u, "100.90.94.100", "198.19.99.232", 6, 61165, 59493, 3, 1924939844u},
    {AF_INET, 1, 7, 3735928559u, "100.83.211.64", "198.18.218.200", 1, 23961, 24662, 2, 983826874u},
    {AF_INET, 1, 7, 3735928559u, "100.102.14.165", "198.18.34.53", 6, 46315, 13128, 1, 475279355u},
    {AF_INET, 2, 7, 3735928559u, "10.0.0.1", "198.18.254.254", 1, 32549, 32471, 3, 1722122807u},
    {AF_INET, 2, 7, 3735928559u, "100.127.254.125", "198.18.254.252", 1, 32465, 32436, 2,
     1506201712u},
    {AF_INET, 2, 7, 3735928559u, "100.94.251.124", "198.19.124.252", 1, 64701, 64820, 2,
     1375044802u},
    {AF_INET, 2, 7, 3735928559u, "100.94.247.245", "198.18.248.247", 6, 31771, 31212, 2,
     959992447u},
    {AF_INET, 2, 7, 3735928559u, "100.123.115.113", "198.18.117.115", 6, 29850, 30652, 2,
     1070916475u},
    {AF_INET, 2, 7, 3735928559u, "100.90.94.100", "198.19.99.232", 6, 61165, 59493, 1, 353814270u},
    {AF_INET, 2, 7, 3735928559u, "100.83.211.64", "198.18.218.200", 1, 23961, 24662, 2,
     1017898890u},
    {AF_INET, 2, 7, 3735928559u, "100.102.14.165", "198.18.34.53", 6, 46315, 13128, 2, 1328689596u},
    {AF_INET, 3, 0x37, 3735928559u, "10.0.0.1", "198.18.254.254", 1, 32549, 32471, 2, 1168198635u},
    {AF_INET, 3, 0x37, 3735928559u, "100.127.254.125", "198.18.254.252", 1, 32465, 32436, 0,
     36352946u},
    {AF_INET, 3, 0x37, 3735928559u, "100.94.251.124", "198.19.124.252", 1, 64701, 64820, 2,
     1290497596u},
    {AF_INET, 3, 0x37, 3735928559u, "100.94.247.245", "198.18.248.247", 6, 31771, 31212, 2,
     777738114u},
    {AF_INET, 3, 0x37, 3735928559u, "100.123.115.113", "198.18.117.115", 6, 29850, 30652, 2,
     752240759u},
    {AF_INET, 3, 0x37, 3735928559u, "100.90.94.100", "198.19.99.232", 6, 61165, 59493, 0,
     101653127u},
    {AF_INET, 3, 0x37, 3735928559u, "100.83.211.64", "198.18.218.200", 1, 23961, 24662, 3,
     1742234693u},
    {AF_INET, 3, 0x37, 3735928559u, "100.102.14.165", "198.18.34.53", 6, 46315, 13128, 3,
     1653685587u},
    {AF_INET, 3, 0x22, 3735928559u, "10.0.0.1", "198.18.254.254", 1, 32549, 32471, 2, 602829413u},
    {AF_INET, 3, 0x22, 3735928559u, "100.127.254.125", "198.18.254.252", 1, 32465, 32436, 0,
     43819844u},
    {AF_INET, 3, 0x22, 3735928559u, "100.94.251.124", "198.19.124.252", 1, 64701, 64820, 2,
     1063091691u},
    {AF_INET, 3, 0x22, 3735928559u, "100.94.247.245", "198.18.248.247", 6, 31771, 31212, 2,
     1208585342u},
    {AF_INET, 3, 0x22, 3735928559u, "100.123.115.113", "198.18.117.115", 6, 29850, 30652, 2,
     1508452823u},
    {AF_INET, 3, 0x22, 3735928559u, "100.90.94.100", "198.19.99.232", 6, 61165, 59493, 1,
     321553980u},
    {AF_INET, 3, 0x22, 3735928559u, "100.83.211.64", "198.18.218.200", 1, 23961, 24662, 2,
     975315968u},
    {AF_INET, 3, 0x22, 3735928559u, "100.102.14.165", "198.18.34.53", 6, 46315, 13128, 1,
     211855624u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7f04:fe9b::ff0c", 58, 32549, 32471,
     2, 1650456068u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8:ff:fe2d::fe44", "2001:db8:100:7e88:fe81::fda7", 58,
     32465, 32436, 2, 1665914720u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7da5:fc2c::7c8d", 58, 65020, 64701,
     2, 1578344059u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8:ff:f9a2::7b56", "2001:db8:100:7acb:7c1b::79ec", 6,
     64449, 31931, 1, 814039003u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8:ff:77bb::7506", "2001:db8:100:f933:7684::749a", 58,
     31331, 63440, 2, 1302987219u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7147:ec39::70dc", 6, 29515, 61308, 3,
     2130881152u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8:ff:63f6::e4ff", "2001:db8:100:e92b:68e3::5eb3", 58,
     60777, 60457, 2, 1606378253u},
    {AF_INET6, 0, 7, 3735928559u, "2001:db8:ff:d3eb::3fe6", "2001:db8:100:dab7:c960::4c6c", 6,
     24662, 53648, 2, 1144231299u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7f04:fe9b::ff0c", 58, 32549, 32471,
     2, 1581682366u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8:ff:fe2d::fe44", "2001:db8:100:7e88:fe81::fda7", 58,
     32465, 32436, 3, 1807800994u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7da5:fc2c::7c8d", 58, 65020, 64701,
     2, 1010382148u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8:ff:f9a2::7b56", "2001:db8:100:7acb:7c1b::79ec", 6,
     64449, 31931, 1, 737077619u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8:ff:77bb::7506", "2001:db8:100:f933:7684::749a", 58,
     31331, 63440, 2, 1087096465u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7147:ec39::70dc", 6, 29515, 61308, 2,
     1312714746u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8:ff:63f6::e4ff", "2001:db8:100:e92b:68e3::5eb3", 58,
     60777, 60457, 1, 814707156u},
    {AF_INET6, 1, 7, 3735928559u, "2001:db8:ff:d3eb::3fe6", "2001:db8:100:dab7:c960::4c6c", 6,
     24662, 53648, 2, 1079713629u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7f04:fe9b::ff0c", 58, 32549, 32471,
     2, 1650456068u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8:ff:fe2d::fe44", "2001:db8:100:7e88:fe81::fda7", 58,
     32465, 32436, 2, 1665914720u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7da5:fc2c::7c8d", 58, 65020, 64701,
     2, 1578344059u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8:ff:f9a2::7b56", "2001:db8:100:7acb:7c1b::79ec", 6,
     64449, 31931, 1, 814039003u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8:ff:77bb::7506", "2001:db8:100:f933:7684::749a", 58,
     31331, 63440, 2, 1302987219u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8::1", "2001:db8:100:7147:ec39::70dc", 6, 29515, 61308, 3,
     2130881152u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8:ff:63f6::e4ff", "2001:db8:100:e92b:68e3::5eb3", 58,
     60777, 60457, 2, 1606378253u},
    {AF_INET6, 2, 7, 3735928559u, "2001:db8:ff:d3eb::3fe6", "2001:db8:100:dab7:c960::4c6c", 6,
     24662, 53648, 2, 1144231299u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8::1", "2001:db8:100:7f04:fe9b::ff0c", 58, 32549,
     32471, 2, 1581682366u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8:ff:fe2d::fe44", "2001:db8:100:7e88:fe81::fda7", 58,
     32465, 32436, 3, 1807800994u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8::1", "2001:db8:100:7da5:fc2c::7c8d", 58, 65020,
     64701, 2, 1010382148u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8:ff:f9a2::7b56", "2001:db8:100:7acb:7c1b::79ec", 6,
     64449, 31931, 1, 737077619u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8:ff:77bb::7506", "2001:db8:100:f933:7684::749a", 58,
     31331, 63440, 2, 1087096465u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8::1", "2001:db8:100:7147:ec39::70dc", 6, 29515, 61308,
     2, 1312714746u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8:ff:63f6::e4ff", "2001:db8:100:e92b:68e3::5eb3", 58,
     60777, 60457, 1, 814707156u},
    {AF_INET6, 3, 0x37, 3735928559u, "2001:db8:ff:d3eb::3fe6", "2001:db8:100:dab7:c960::4c6c", 6,
     24662, 53648, 2, 1079713629u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8::1", "2001:db8:100:7f04:fe9b::ff0c", 58, 32549,
     32471, 0, 531549819u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8:ff:fe2d::fe44", "2001:db8:100:7e88:fe81::fda7", 58,
     32465, 32436, 0, 422721825u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8::1", "2001:db8:100:7da5:fc2c::7c8d", 58, 65020,
     64701, 2, 867456163u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8:ff:f9a2::7b56", "2001:db8:100:7acb:7c1b::79ec", 6,
     64449, 31931, 2, 1531130602u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8:ff:77bb::7506", "2001:db8:100:f933:7684::749a", 58,
     31331, 63440, 1, 656981480u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8::1", "2001:db8:100:7147:ec39::70dc", 6, 29515, 61308,
     2, 963006859u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8:ff:63f6::e4ff", "2001:db8:100:e92b:68e3::5eb3", 58,
     60777, 60457, 2, 1157000132u},
    {AF_INET6, 3, 0x22, 3735928559u, "2001:db8:ff:d3eb::3fe6", "2001:db8:100:dab7:c960::4c6c", 6,
     24662, 53648, 2, 1373911912u},
};

static const uint16_t weights4[] = {1, 2, 5, 3};
static const uint16_t weights6[] = {3, 1, 4, 2};

static void
golden_flow(const struct golden *g, struct fib_mp_hash *h, struct fib_flow *fl,
	    union fib_addr *saddr)
{
	memset(h, 0, sizeof(*h));
	memset(fl, 0, sizeof(*fl));
	memset(saddr, 0, sizeof(*saddr));
	h->policy4 = h->policy6 = g->policy;
	h->fields4 = h->fields6 = g->fields;
	h->seed = g->seed;
	h->seed_set = 1;
	fl->family = (uint8_t)g->family;
	fl->ipproto = g->proto;
	fl->sport = g->sport;
	fl->dport = g->dport;
	ck_assert_int_eq(inet_pton(g->family, g->dst, fl->dst.b), 1);
	if (g->src) {
		ck_assert_int_eq(inet_pton(g->family, g->src, saddr->b), 1);
		fl->src = *saddr;
		fl->flags |= FIB_FLOW_SRC;
	}
}

START_TEST(test_golden)
{
	size_t i, n = sizeof(golden) / sizeof(golden[0]);

	ck_assert_uint_ge(n, 100);
	for (i = 0; i < n; i++) {
		const struct golden *g = &golden[i];
		struct fib_mp_hash h;
		struct fib_flow fl;
		union fib_addr saddr;
		uint32_t hash;
		unsigned path;

		golden_flow(g, &h, &fl, &saddr);
		hash = fib_mphash(&h, &fl, &saddr);
		path = g->family == AF_INET ? fib_mphash_select(hash, weights4, 4)
					    : fib_mphash_select(hash, weights6, 4);
		ck_assert_msg(path == g->path, "vector %zu (%s -> %s): path %u, kernel %u", i,
			      g->src ? g->src : "-", g->dst, path, g->path);
		ck_assert_msg(hash == g->hash, "vector %zu: hash %u, expected %u", i, hash,
			      g->hash);
		ck_assert_uint_le(hash, 0x7fffffffu);
	}
}
END_TEST

/* NULL saddr is the unspecified address */
START_TEST(test_null_saddr)
{
	const struct golden *g = &golden[0];
	struct fib_mp_hash h;
	struct fib_flow fl;
	union fib_addr zero, saddr;

	golden_flow(g, &h, &fl, &saddr);
	memset(&zero, 0, sizeof(zero));
	ck_assert_uint_eq(fib_mphash(&h, &fl, NULL), fib_mphash(&h, &fl, &zero));
}
END_TEST

/* SipHash-2-4 reference vectors (Aumasson and Bernstein, the paper's
 * appendix): key 00 01 .. 0f, message 00 01 .. len-1 */
START_TEST(test_siphash_reference)
{
	static const uint64_t want[] = {
	    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	    0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	    0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	};
	uint8_t key[16], msg[16];
	size_t i;

	for (i = 0; i < 16; i++)
		key[i] = msg[i] = (uint8_t)i;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(mp_siphash(msg, i, le64(key), le64(key + 8)) == want[i], "length %zu",
			      i);
}
END_TEST

/* flow_keys_hash_length: 48 bytes for IPv4, 72 for IPv6 */
START_TEST(test_keys_len)
{
	ck_assert_uint_eq(mp_keys_len(AF_INET), 48);
	ck_assert_uint_eq(mp_keys_len(AF_INET6), 72);
}
END_TEST

/* __flow_hash_consistentify: both directions of a flow hash alike */
START_TEST(test_symmetric)
{
	struct fib_mp_hash h;
	struct fib_flow a, b;
	int fam;

	for (fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		memset(&h, 0, sizeof(h));
		h.policy4 = h.policy6 = 1;
		h.seed = 42;
		memset(&a, 0, sizeof(a));
		a.family = (uint8_t)family;
		a.ipproto = IPPROTO_TCP;
		a.sport = 40000;
		a.dport = 443;
		inet_pton(family, fam ? "2001:db8::1" : "192.0.2.1", a.src.b);
		inet_pton(family, fam ? "2001:db8::2" : "198.51.100.2", a.dst.b);
		b = a;
		b.src = a.dst;
		b.dst = a.src;
		b.sport = a.dport;
		b.dport = a.sport;
		ck_assert_uint_eq(fib_mphash(&h, &a, &a.src), fib_mphash(&h, &b, &b.src));
	}
}
END_TEST

/* Policy 3 without an outer field: one value for every flow (IPv4:
 * jhash_2words(0, 0, 0) >> 1, IPv6: 0); unknown family or policy: 0. */
START_TEST(test_degenerate)
{
	struct fib_mp_hash h;
	struct fib_flow fl;
	uint32_t first = 0;
	int i;

	memset(&h, 0, sizeof(h));
	h.policy4 = h.policy6 = 3;
	h.fields4 = h.fields6 = 0x0fc0; /* inner fields only */
	h.seed = 7;
	for (i = 0; i < 16; i++) {
		memset(&fl, 0, sizeof(fl));
		fl.family = AF_INET;
		fl.dst.b[0] = 10;
		fl.dst.b[3] = (uint8_t)i;
		fl.ipproto = IPPROTO_UDP;
		fl.sport = (uint16_t)(1000 + i);
		if (!i)
			first = fib_mphash(&h, &fl, NULL);
		ck_assert_uint_eq(fib_mphash(&h, &fl, NULL), first);
		fl.family = AF_INET6;
		ck_assert_uint_eq(fib_mphash(&h, &fl, NULL), 0);
	}
	ck_assert_uint_eq(first, mp_jhash_2words(0, 0, 0) >> 1);
	fl.family = AF_UNSPEC;
	ck_assert_uint_eq(fib_mphash(&h, &fl, NULL), 0);
	h.policy4 = 4;
	fl.family = AF_INET;
	ck_assert_uint_eq(fib_mphash(&h, &fl, NULL), 0);
}
END_TEST

/* fib_rebalance's bounds: DIV_ROUND_CLOSEST((u64)w << 31, total) - 1 */
START_TEST(test_select_bounds)
{
	static const uint16_t two[] = {1, 1}, three[] = {1, 1, 1}, one[] = {5};

	ck_assert_uint_eq(fib_mphash_select(0, two, 2), 0);
	ck_assert_uint_eq(fib_mphash_select((1u << 30) - 1, two, 2), 0);
	ck_assert_uint_eq(fib_mphash_select(1u << 30, two, 2), 1);
	ck_assert_uint_eq(fib_mphash_select(0x7fffffffu, two, 2), 1);
	/* 2^31 / 3 = 715827882.67: rounded to 715827883, bound 715827882 */
	ck_assert_uint_eq(fib_mphash_select(715827882u, three, 3), 0);
	ck_assert_uint_eq(fib_mphash_select(715827883u, three, 3), 1);
	/* 2 * 2^31 / 3 = 1431655765.33: bound 1431655764 */
	ck_assert_uint_eq(fib_mphash_select(1431655764u, three, 3), 1);
	ck_assert_uint_eq(fib_mphash_select(1431655765u, three, 3), 2);
	ck_assert_uint_eq(fib_mphash_select(0x7fffffffu, one, 1), 0);
	ck_assert_uint_eq(fib_mphash_select(3, one, 0), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("mphash");
	TCase *tc = tcase_create("mphash");

	tcase_add_test(tc, test_golden);
	tcase_add_test(tc, test_null_saddr);
	tcase_add_test(tc, test_siphash_reference);
	tcase_add_test(tc, test_keys_len);
	tcase_add_test(tc, test_symmetric);
	tcase_add_test(tc, test_degenerate);
	tcase_add_test(tc, test_select_bounds);
	suite_add_tcase(s, tc);
	return ck_run(s, CK_FORK_GETENV);
}
