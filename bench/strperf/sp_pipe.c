/*
 * sp_pipe.c -- local one-way channels between two processes: the Linux
 * pipe and an AF_UNIX stream socketpair (the baseline rows of PIPE_STREAM),
 * and the STREAMS pipe (s_pipe(), carried between the two processes by
 * the shared-memory pipe driver once they fork).
 *
 * How this works
 *
 *   Both are made before the fork (prefork), so the two processes inherit
 *   the two ends; the receiver takes the read end, the sender the write
 *   end, and the driver closes whatever neither took, so the sender's
 *   close is the receiver's end of file.  --bufsize is F_SETPIPE_SZ for
 *   the pipe (the kernel rounds it up to a power-of-two number of pages)
 *   and SO_SNDBUF/SO_RCVBUF on both ends of the socketpair.  Both are byte
 *   streams: the driver counts bytes and divides by the message size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stropts.h>

#include "strperf-point.h"

enum { END_RX = 0, END_TX = 1 };

/* Move descriptor i out of the shared set into the endpoint. */
static int take(struct sp_ep *ep, struct sp_shared *sh, int i)
{
	if (sh->fd[i] < 0)
		return sp_fail("prefork left no descriptor %d", i);
	ep->fd = sh->fd[i];
	sh->fd[i] = -1;
	return 0;
}

/* ---- pipe(2) ---- */

static int pipe_prefork(const struct sp_point *pt, struct sp_shared *sh)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return sp_fail("pipe: %s", strerror(errno));
	sh->fd[END_RX] = fds[0];
	sh->fd[END_TX] = fds[1];
	if (pt->bufsize > 0 && fcntl(fds[1], F_SETPIPE_SZ, pt->bufsize) < 0)
		return sp_fail("F_SETPIPE_SZ %d: %s", pt->bufsize,
			       strerror(errno));
	return 0;
}

static int pipe_rx_open(struct sp_ep *ep, struct sp_shared *sh,
			struct sp_addr *self)
{
	if (take(ep, sh, END_RX) < 0)
		return -1;
	ep->rcvbuf = fcntl(ep->fd, F_GETPIPE_SZ);
	return 0;
}

static int pipe_tx_open(struct sp_ep *ep, struct sp_shared *sh,
			const struct sp_addr *peer, struct sp_addr *self)
{
	if (take(ep, sh, END_TX) < 0)
		return -1;
	ep->sndbuf = fcntl(ep->fd, F_GETPIPE_SZ);
	return 0;
}

static ssize_t pipe_send(struct sp_ep *ep, const void *buf, size_t len)
{
	return write(ep->fd, buf, len);
}

/* With waitall, read until len bytes, end of file, or an interruption. */
static ssize_t pipe_recv(struct sp_ep *ep, void *buf, size_t len, int waitall)
{
	size_t got = 0;
	ssize_t n;

	if (!waitall)
		return read(ep->fd, buf, len);
	while (got < len) {
		n = read(ep->fd, (char *)buf + got, len - got);
		if (n <= 0)
			return got ? (ssize_t)got : n;
		got += n;
	}
	return got;
}

/* ---- AF_UNIX socketpair ---- */

static int spair_prefork(const struct sp_point *pt, struct sp_shared *sh)
{
	struct sp_ep tmp = { .pt = pt };
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		return sp_fail("socketpair: %s", strerror(errno));
	sh->fd[END_RX] = fds[0];
	sh->fd[END_TX] = fds[1];
	if (sp_set_sockbufs(&tmp, fds[0]) < 0 ||
	    sp_set_sockbufs(&tmp, fds[1]) < 0)
		return -1;
	/* one-way: the reader never writes, the writer never reads */
	if (shutdown(fds[0], SHUT_WR) < 0 || shutdown(fds[1], SHUT_RD) < 0)
		return sp_fail("shutdown: %s", strerror(errno));
	return 0;
}

static int spair_rx_open(struct sp_ep *ep, struct sp_shared *sh,
			 struct sp_addr *self)
{
	if (take(ep, sh, END_RX) < 0)
		return -1;
	return sp_set_sockbufs(ep, ep->fd);
}

static int spair_tx_open(struct sp_ep *ep, struct sp_shared *sh,
			 const struct sp_addr *peer, struct sp_addr *self)
{
	if (take(ep, sh, END_TX) < 0)
		return -1;
	return sp_set_sockbufs(ep, ep->fd);
}

static ssize_t spair_send(struct sp_ep *ep, const void *buf, size_t len)
{
	return send(ep->fd, buf, len, MSG_NOSIGNAL);
}

static ssize_t spair_recv(struct sp_ep *ep, void *buf, size_t len, int waitall)
{
	return recv(ep->fd, buf, len, waitall ? MSG_WAITALL : 0);
}

/* ---- STREAMS pipe ---- */

/* A ThreadSanitizer build of this program cannot follow the STREAMS
 * executive into the forked processes (it refuses threads started after
 * fork): such a build measures nothing anyway. */
static int spipe_available(const struct sp_point *pt, char *why, size_t len)
{
#if defined(__SANITIZE_THREAD__)
	snprintf(why, len, "not in a ThreadSanitizer build");
	return -1;
#else
	(void)pt;
	(void)why;
	(void)len;
	return 0;
#endif
}

static int spipe_prefork(const struct sp_point *pt, struct sp_shared *sh)
{
	int fds[2];

	if (s_pipe(fds) < 0)
		return sp_fail("s_pipe: %s", strerror(errno));
	sh->fd[END_RX] = fds[0];
	sh->fd[END_TX] = fds[1];
	return 0;
}

static int spipe_rx_open(struct sp_ep *ep, struct sp_shared *sh,
			 struct sp_addr *self)
{
	return take(ep, sh, END_RX);
}

static int spipe_tx_open(struct sp_ep *ep, struct sp_shared *sh,
			 const struct sp_addr *peer, struct sp_addr *self)
{
	return take(ep, sh, END_TX);
}

static void chan_close(struct sp_ep *ep)
{
	sp_close_fd(&ep->fd);
}

const struct sp_impl sp_pipe_pipe = {
	.name = "pipe",
	.desc = "Linux pipe(2), one write()/read() per message",
	.family = SP_FAM_PIPE,
	.modes = SP_MODE_STREAM,
	.byte_stream = 1,
	.prefork = pipe_prefork,
	.rx_open = pipe_rx_open,
	.tx_open = pipe_tx_open,
	.send = pipe_send,
	.recv = pipe_recv,
	.close = chan_close,
};

const struct sp_impl sp_pipe_socketpair = {
	.name = "socketpair",
	.desc = "AF_UNIX SOCK_STREAM socketpair, one send()/recv() per message",
	.family = SP_FAM_PIPE,
	.modes = SP_MODE_STREAM,
	.byte_stream = 1,
	.prefork = spair_prefork,
	.rx_open = spair_rx_open,
	.tx_open = spair_tx_open,
	.send = spair_send,
	.recv = spair_recv,
	.close = chan_close,
};

const struct sp_impl sp_pipe_streams = {
	.name = "streams",
	.desc = "STREAMS pipe (s_pipe, shared memory between the processes), "
		"one write()/read() per message; --bufsize does not apply "
		"(a fixed shared ring each way)",
	.family = SP_FAM_PIPE,
	.modes = SP_MODE_STREAM,
	.byte_stream = 1,
	.available = spipe_available,
	.prefork = spipe_prefork,
	.rx_open = spipe_rx_open,
	.tx_open = spipe_tx_open,
	.send = pipe_send,
	.recv = pipe_recv,
	.close = chan_close,
};
