/*
 * test_reg -- register_strmod/register_strdev and their errors, lookup,
 * unregistering what is in use, autopush configuration.
 */
#include <errno.h>

#include "t.h"
#include "harness.h"

static int r_put(queue_t *q, mblk_t *mp) { putnext(q, mp); return 0; }
static int r_open(queue_t *q, dev_t *d, int o, int s, cred_t *c) { return 0; }

static struct module_info mi = { 4242, "rmod", 0, INFPSZ, 1024, 512 };
static struct qinit ri = { r_put, NULL, r_open, NULL, NULL, &mi, NULL };
static struct qinit wi = { r_put, NULL, NULL, NULL, NULL, &mi, NULL };
static struct qinit ri_noopen = { r_put, NULL, NULL, NULL, NULL, &mi, NULL };
static struct qinit wi_noput = { NULL, NULL, NULL, NULL, NULL, &mi, NULL };
static struct streamtab tab = { &ri, &wi, NULL, NULL };
static struct streamtab tab_noopen = { &ri_noopen, &wi, NULL, NULL };
static struct streamtab tab_noput = { &ri, &wi_noput, NULL, NULL };
static struct streamtab tab_halfmux = { &ri, &wi, &ri, NULL };
static struct streamtab tab_mux = { &ri, &wi, &ri, &wi };

static void test_modules(void)
{
	struct fmodsw good = { .f_name = "rmod", .f_str = &tab, .f_flag = D_MP };
	struct fmodsw same = { .f_name = "rmod", .f_str = &tab, .f_flag = D_MP };
	struct fmodsw bad;

	CHECK_EQ(register_strmod(NULL), -EINVAL);
	bad = (struct fmodsw){ .f_name = "", .f_str = &tab };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "toolongname", .f_str = &tab };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "a/b", .f_str = &tab };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = NULL, .f_str = &tab };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "x", .f_str = NULL };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "x", .f_str = &tab_noopen };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "x", .f_str = &tab_noput };
	CHECK_EQ(register_strmod(&bad), -EINVAL);
	bad = (struct fmodsw){ .f_name = "x", .f_str = &tab_mux };
	CHECK_EQ(register_strmod(&bad), -EINVAL);	/* modules aren't muxes */

	CHECK_EQ(register_strmod(&good), 0);
	CHECK_EQ(good.f_modid, 4242);
	CHECK_EQ(register_strmod(&good), -EEXIST);
	CHECK_EQ(register_strmod(&same), -EEXIST);
	CHECK_PTR(fmod_find("rmod"), &good);
	CHECK_PTR(fmod_find("nosuch"), NULL);
	CHECK_PTR(fmod_find(NULL), NULL);

	/* in use: cannot go */
	struct stdata *sd = th_stream("tsink", "rmod", NULL);
	REQUIRE(sd != NULL);
	CHECK_EQ(good.f_count, 1);
	CHECK_EQ(unregister_strmod(&good), -EBUSY);
	th_close(sd);
	CHECK_EQ(good.f_count, 0);
	CHECK_EQ(unregister_strmod(&good), 0);
	CHECK_EQ(unregister_strmod(&good), -ENOENT);
	CHECK_EQ(unregister_strmod(NULL), -EINVAL);
	CHECK_PTR(fmod_find("rmod"), NULL);
	CHECK_PTR(th_stream("tsink", "rmod", NULL), NULL);	/* gone */
	/* register again after unregistering */
	CHECK_EQ(register_strmod(&same), 0);
	CHECK_EQ(unregister_strmod(&same), 0);
}

static void test_drivers(void)
{
	struct cdevsw d1 = { .d_name = "rdrv1", .d_str = &tab, .d_flag = D_MP };
	struct cdevsw d2 = { .d_name = "rdrv2", .d_str = &tab, .d_flag = D_MP };
	struct cdevsw d3 = { .d_name = "rdrv3", .d_str = &tab_mux, .d_flag = D_MP };
	struct cdevsw dup = { .d_name = "rdrv1", .d_str = &tab, .d_flag = D_MP };
	struct cdevsw bad;
	int m1, m2;

	CHECK_EQ(register_strdev(NULL, 0), -EINVAL);
	bad = (struct cdevsw){ .d_name = "halfmux", .d_str = &tab_halfmux };
	CHECK_EQ(register_strdev(&bad, 0), -EINVAL);
	bad = (struct cdevsw){ .d_name = "a-name-that-is-far-too-long-to-use",
			       .d_str = &tab };
	CHECK_EQ(register_strdev(&bad, 0), -EINVAL);
	CHECK_EQ(register_strdev(&d1, 100000), -ENXIO);

	m1 = register_strdev(&d1, 0);
	CHECK(m1 > 0);
	CHECK_EQ(d1.d_major, m1);
	CHECK_PTR(cdev_get(m1), &d1);
	CHECK_PTR(cdev_find("rdrv1"), &d1);
	CHECK_EQ(register_strdev(&dup, 0), -EEXIST);
	CHECK_EQ(register_strdev(&d2, m1), -EBUSY);	/* major taken */
	m2 = register_strdev(&d2, 77);
	CHECK_EQ(m2, 77);
	CHECK(register_strdev(&d3, 0) > 0);		/* a multiplexer */

	struct stdata *sd = th_stream("rdrv1", NULL);
	REQUIRE(sd != NULL);
	CHECK_EQ(unregister_strdev(&d1, 0), -EBUSY);
	th_close(sd);
	CHECK_EQ(unregister_strdev(&d1, 99), -EINVAL);	/* wrong major */
	CHECK_EQ(unregister_strdev(&d1, m1), 0);
	CHECK_PTR(cdev_get(m1), NULL);
	CHECK_EQ(unregister_strdev(&d1, 0), -ENOENT);
	CHECK_EQ(unregister_strdev(&d2, 0), 0);
	CHECK_EQ(unregister_strdev(&d3, 0), 0);
}

static void test_autopush(void)
{
	struct cdevsw d = { .d_name = "rapdrv", .d_str = &tab, .d_flag = D_MP };
	struct strapush sap, got;
	int maj;

	th_register();
	maj = register_strdev(&d, 0);
	REQUIRE(maj > 0);
	memset(&sap, 0, sizeof(sap));
	sap.sap_cmd = SAP_ONE;
	sap.sap_major = maj;
	sap.sap_minor = 3;
	sap.sap_npush = 2;
	strcpy(sap.sap_list[0], "tpass");
	strcpy(sap.sap_list[1], "nosuch");
	CHECK_EQ(autopush_add(&sap), -EINVAL);		/* unknown module */
	strcpy(sap.sap_list[1], "tpassq");
	sap.sap_npush = 0;
	CHECK_EQ(autopush_add(&sap), -EINVAL);
	sap.sap_npush = MAXAPUSH + 1;
	CHECK_EQ(autopush_add(&sap), -EINVAL);
	sap.sap_npush = 2;
	sap.sap_major = 4000;
	CHECK_EQ(autopush_add(&sap), -ENOSTR);		/* no such driver */
	sap.sap_major = maj;
	sap.sap_cmd = 9;
	CHECK_EQ(autopush_add(&sap), -EINVAL);
	sap.sap_cmd = SAP_ONE;
	CHECK_EQ(autopush_add(&sap), 0);
	CHECK_EQ(autopush_add(&sap), -EEXIST);		/* overlaps */
	CHECK_EQ(autopush_find(maj, 3, &got), 0);
	CHECK_EQ(got.sap_npush, 2);
	CHECK(strcmp(got.sap_list[1], "tpassq") == 0);
	CHECK_EQ(autopush_find(maj, 4, &got), -ENODEV);

	sap.sap_cmd = SAP_RANGE;
	sap.sap_minor = 10;
	sap.sap_lastminor = 10;
	CHECK_EQ(autopush_add(&sap), -ERANGE);
	sap.sap_lastminor = 20;
	sap.sap_npush = 1;
	CHECK_EQ(autopush_add(&sap), 0);
	CHECK_EQ(autopush_find(maj, 15, &got), 0);
	CHECK_EQ(got.sap_npush, 1);
	sap.sap_minor = 2;
	sap.sap_lastminor = 4;				/* covers 3 */
	CHECK_EQ(autopush_add(&sap), -EEXIST);
	sap.sap_cmd = SAP_ALL;
	CHECK_EQ(autopush_add(&sap), -EEXIST);		/* overlaps all */

	memset(&got, 0, sizeof(got));
	got.sap_major = maj;
	got.sap_minor = 10;
	CHECK_EQ(autopush_del(&got), 0);
	CHECK_EQ(autopush_del(&got), -ENODEV);
	CHECK_EQ(autopush_find(maj, 15, NULL), -ENODEV);
	got.sap_minor = 3;
	CHECK_EQ(autopush_del(&got), 0);
	sap.sap_cmd = SAP_ALL;
	CHECK_EQ(autopush_add(&sap), 0);
	CHECK_EQ(autopush_find(maj, 12345, NULL), 0);
	/* unregistering the driver drops its configuration */
	CHECK_EQ(unregister_strdev(&d, 0), 0);
	CHECK_EQ(autopush_find(maj, 12345, NULL), -ENODEV);
	CHECK_EQ(autopush_add(NULL), -EINVAL);
	CHECK_EQ(autopush_del(NULL), -EINVAL);
}

int main(void)
{
	th_register();
	th_mark();
	test_modules();
	test_drivers();
	test_autopush();
	CHECK_EQ(th_leaks(), 0);
	T_DONE();
}
