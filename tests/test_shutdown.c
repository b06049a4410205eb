/*
 * test_shutdown -- streams_shutdown (which also runs at exit) drains the
 * scheduler, closes every stream with messages still queued, cancels
 * timeouts and bufcalls, stops the threads and frees everything.  Under
 * the ASan build LeakSanitizer checks the exit as well.
 */
#include "t.h"
#include "harness.h"

static void never(void *arg)
{
	abort();
}

int main(void)
{
	struct strstats st;
	struct stdata *sd[3];

	th_register();
	sd[0] = th_stream("tsinkq", "tpassq", NULL);
	sd[1] = th_stream("techo", "tpass", "tpassp", NULL);
	sd[2] = th_stream("tsink", NULL);
	REQUIRE(sd[0] && sd[1] && sd[2]);
	/* messages left queued in a driver's queue and at a stream head */
	for (int i = 0; i < 100; i++) {
		th_send(sd[0], th_data(100, i));
		th_send(sd[1], th_data(10, i));
	}
	/* flow control split them: the driver's queue filled to high water
	 * (52 x 100 >= 5120), the rest wait in the module above */
	queue_t *mq = WR(str_top(sd[0])), *dq = mq->q_next;
	CHECK_EQ(qsize(dq), 52);
	CHECK(dq->q_flag & QFULL);
	CHECK_EQ(qsize(mq), 48);
	CHECK_EQ(qsize(sd[1]->sd_rq), 100);
	/* a timeout that must never fire, a bufcall that cannot be met */
	CHECK(timeout(never, NULL, 3600 * HZ) != 0);
	CHECK_EQ(streams_set_memlimit(1000), 0);
	CHECK(bufcall(5000, BPRI_MED, never, 0) != 0);
	streams_stats(&st);
	CHECK_EQ(st.stream_inuse, 3);
	CHECK_EQ(st.timeouts_pending, 1);
	CHECK_EQ(st.bufcalls_pending, 1);

	streams_shutdown();
	streams_stats(&st);
	CHECK_EQ(st.stream_inuse, 0);
	CHECK_EQ(st.queue_inuse, 0);
	CHECK_EQ(st.mblk_inuse, 0);
	CHECK_EQ(st.dblk_inuse, 0);
	CHECK_EQ(st.timeouts_pending, 0);
	CHECK_EQ(st.bufcalls_pending, 0);
	CHECK_EQ(st.workers, 0);
	streams_shutdown();		/* again: harmless */
	T_DONE();
}
