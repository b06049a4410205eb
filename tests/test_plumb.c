/*
 * test_plumb -- opening a driver, pushing and popping modules, closing:
 * which open/close procedures run with which flags, message paths through
 * the stack, qprocson/qprocsoff, anchors, failed opens, and pushing and
 * popping while another thread sends (grace periods; run under TSan).
 */
#include <errno.h>
#include <pthread.h>

#include "t.h"
#include "harness.h"

/* A module that records its opens, closes and put calls. */
static _Atomic int p_opens, p_closes, p_puts, p_last_sflag;
static _Atomic int p_fail_open;

static int p_open(queue_t *q, dev_t *devp, int oflag, int sflag, cred_t *cr)
{
	atomic_store(&p_last_sflag, sflag);
	if (atomic_load(&p_fail_open))
		return EIO;
	atomic_fetch_add(&p_opens, 1);
	return 0;
}

static int p_close(queue_t *q, int oflag, cred_t *cr)
{
	atomic_fetch_add(&p_closes, 1);
	return 0;
}

static int p_put(queue_t *q, mblk_t *mp)
{
	atomic_fetch_add(&p_puts, 1);
	putnext(q, mp);
	return 0;
}

static struct module_info p_mi = { 0, "prec", 0, INFPSZ, 4096, 1024 };
static struct qinit p_ri = { p_put, NULL, p_open, p_close, NULL, &p_mi, NULL };
static struct qinit p_wi = { p_put, NULL, NULL, NULL, NULL, &p_mi, NULL };
static struct streamtab p_tab = { &p_ri, &p_wi, NULL, NULL };
static struct fmodsw prec = { .f_name = "prec", .f_str = &p_tab, .f_flag = 0 };
static struct cdevsw precd = { .d_name = "precd", .d_str = &p_tab, .d_flag = D_MP };

static void test_open_flags(void)
{
	struct stdata *sd;

	atomic_store(&p_opens, 0);
	sd = th_stream("techo", "prec", NULL);
	REQUIRE(sd != NULL);
	CHECK_EQ(atomic_load(&p_last_sflag), MODOPEN);
	CHECK_EQ(sd->sd_pushcnt, 1);
	/* a message goes down through prec, comes back up through it */
	atomic_store(&p_puts, 0);
	th_send(sd, th_data(5, 'x'));
	CHECK_EQ(atomic_load(&p_puts), 2);
	mblk_t *mp = getq(sd->sd_rq);
	REQUIRE(mp != NULL);
	CHECK_EQ(msgdsize(mp), 5);
	freemsg(mp);

	/* procedures off: prec is bypassed; back on: used again */
	queue_t *top = str_top(sd);
	qprocsoff(top);
	th_send(sd, th_data(1, 'y'));
	CHECK_EQ(atomic_load(&p_puts), 2);
	freemsg(getq(sd->sd_rq));
	qprocson(top);
	th_send(sd, th_data(1, 'z'));
	CHECK_EQ(atomic_load(&p_puts), 4);
	freemsg(getq(sd->sd_rq));

	atomic_store(&p_closes, 0);
	th_close(sd);
	CHECK_EQ(atomic_load(&p_closes), 1);

	/* the driver's open sees DRVOPEN */
	sd = th_stream("precd", NULL);
	REQUIRE(sd != NULL);
	CHECK_EQ(atomic_load(&p_last_sflag), DRVOPEN);
	th_close(sd);
}

static void test_failed_open(void)
{
	struct stdata *sd;

	atomic_store(&p_fail_open, 1);
	CHECK_PTR(th_stream("precd", NULL), NULL);	/* driver open fails */
	CHECK_EQ(precd.d_count, 0);
	sd = th_stream("tsink", NULL);
	REQUIRE(sd != NULL);
	cred_t cr;
	dev_t dev = 0;
	str_getcred(&cr);
	pthread_mutex_lock(&sd->sd_plumb);
	CHECK_EQ(str_push(sd, &prec, &dev, 0, &cr), EIO);
	CHECK_EQ(sd->sd_pushcnt, 0);
	CHECK_EQ(str_push(sd, NULL, &dev, 0, &cr), EINVAL);
	pthread_mutex_unlock(&sd->sd_plumb);
	CHECK_EQ(prec.f_count, 0);
	atomic_store(&p_fail_open, 0);
	th_close(sd);
}

static void test_stack_order(void)
{
	/* modules are pushed below the head: last named is on top */
	struct stdata *sd = th_stream("tsink", "tpass", "tpassq", "prec", NULL);
	REQUIRE(sd != NULL);
	queue_t *q = str_top(sd);
	CHECK_PTR(q_pair(q)->qp_mod, &prec);
	q = RD(WR(q)->q_next);
	CHECK_PTR(q_pair(q)->qp_mod, &th_tpassq);
	q = RD(WR(q)->q_next);
	CHECK_PTR(q_pair(q)->qp_mod, &th_tpass);
	q = RD(WR(q)->q_next);
	CHECK_PTR(q_pair(q)->qp_mod, &th_tsink);
	CHECK_PTR(WR(q)->q_next, NULL);
	/* read side mirrors it */
	CHECK_PTR(str_top(sd)->q_next, sd->sd_rq);
	CHECK(SAMESTR(sd->sd_wq));

	cred_t cr;
	str_getcred(&cr);
	pthread_mutex_lock(&sd->sd_plumb);
	sd->sd_anchor = 2;
	CHECK_EQ(str_pop(sd, 0, &cr), 0);		/* prec goes */
	/* at the anchor: an unprivileged caller may not pop, root may */
	cred_t user = cr;
	user.cr_uid = user.cr_ruid = 65534;
	CHECK_EQ(str_pop(sd, 0, &user), EPERM);
	cred_t root = cr;
	root.cr_uid = 0;
	CHECK_EQ(str_pop(sd, 0, &root), 0);
	sd->sd_anchor = 0;
	CHECK_EQ(str_pop(sd, 0, &cr), 0);
	CHECK_EQ(str_pop(sd, 0, &cr), EINVAL);		/* only the driver */
	CHECK_EQ(sd->sd_pushcnt, 0);
	pthread_mutex_unlock(&sd->sd_plumb);
	th_send(sd, th_data(3, 'q'));
	CHECK_EQ(th_sink_count(sd), 1);
	th_close(sd);
}

/* Push and pop while another thread sends through an echo stream. */
#define NSEND 100000
static struct stdata *race_sd;
static _Atomic int race_done;

static void *sender(void *arg)
{
	for (int i = 0; i < NSEND; i++)
		th_send(race_sd, th_data(1, i));
	atomic_store(&race_done, 1);
	return arg;
}

static void test_plumb_race(void)
{
	pthread_t th;
	cred_t cr;
	dev_t dev = 0;
	int cycles = 0;

	str_getcred(&cr);
	race_sd = th_stream("techo", "tpass", NULL);
	REQUIRE(race_sd != NULL);
	atomic_store(&race_done, 0);
	REQUIRE(pthread_create(&th, NULL, sender, NULL) == 0);
	while (!atomic_load(&race_done) || cycles < 20) {
		static const char *mods[] = { "tpass", "tpassp", "tpassm", "prec" };
		pthread_mutex_lock(&race_sd->sd_plumb);
		CHECK_EQ(str_push(race_sd, fmod_find(mods[cycles % 4]), &dev, 0, &cr), 0);
		CHECK_EQ(str_pop(race_sd, 0, &cr), 0);
		pthread_mutex_unlock(&race_sd->sd_plumb);
		cycles++;
	}
	pthread_join(th, NULL);
	/* every message came back: nothing lost in a popped module */
	CHECK_EQ(qsize(race_sd->sd_rq), NSEND);
	CHECK(cycles >= 20);
	th_close(race_sd);
}

int main(void)
{
	th_register();
	REQUIRE(register_strmod(&prec) == 0);
	REQUIRE(register_strdev(&precd, 0) > 0);
	th_mark();
	test_open_flags();
	test_failed_open();
	test_stack_order();
	test_plumb_race();
	CHECK_EQ(th_leaks(), 0);
	struct strstats st;
	streams_stats(&st);
	CHECK(st.grace_periods > 0);
	T_DONE();
}
