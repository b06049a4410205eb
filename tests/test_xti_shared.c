/*
 * test_xti_shared -- a program linked against the shared libraries, as
 * an installed application is, that has functions of its own named like
 * the XTI library's internal helpers (xti_init, xti_read, xti_get): the
 * library keeps calling its own (libxti.so exports the t_* API alone),
 * and an endpoint opened, bound and closed works.
 */
#include <fcntl.h>
#include <stropts.h>
#include <xti.h>

#include "t.h"

static int mine;

/* (the application's own, unrelated functions) */
void xti_init(void);
int xti_read(int x);
void *xti_get(int fd);

void xti_init(void)
{
	mine++;
}

int xti_read(int x)
{
	mine++;
	return x;
}

void *xti_get(int fd)
{
	(void)fd;
	mine++;
	return NULL;
}

int main(void)
{
	struct t_info info;
	int fd = t_open("/dev/ticlts", O_RDWR, &info);

	CHECK(fd >= 0);
	CHECK_EQ(isastream(fd), 1);
	CHECK_EQ(info.servtype, T_CLTS);
	CHECK_EQ(t_bind(fd, NULL, NULL), 0);
	CHECK_EQ(t_getstate(fd), T_IDLE);
	CHECK_EQ(t_close(fd), 0);
	CHECK_EQ(mine, 0);
	T_DONE();
}
