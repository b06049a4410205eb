/*
 * xti_look.c -- t_look: the current event on an endpoint.
 *
 * The event of the first message the library holds (met by an earlier
 * call, which answered TLOOK), else of the first message at the stream
 * head, looked at with I_PEEK and left there: T_LISTEN, T_CONNECT,
 * T_DATA, T_EXDATA, T_DISCONNECT, T_UDERR, T_ORDREL.  When nothing
 * arrived, T_GODATA (T_GOEXDATA) once normal (expedited) data can be sent
 * again after a send failed TFLOW; both may be reported together.
 */
#include <errno.h>
#include <stropts.h>

#include "xti_impl.h"

static bool can_send(int fd, int band)
{
	return ioctl(fd, I_CANPUT, band) == 1;
}

int t_look(int fd)
{
	struct xti_ep *ep = xti_get(fd);
	unsigned int fl;
	int ev, band;

	if (ep == NULL)
		return -1;
	ev = xti_pending(ep);
	if (ev != 0) {
		xti_put(ep);
		return ev;
	}
	pthread_mutex_lock(&ep->ep_lock);
	fl = ep->ep_flags & (EPF_FLOW | EPF_EXFLOW);
	band = (ep->ep_info.PROVIDER_flag & EXPINLINE) ? 0 : 1;
	pthread_mutex_unlock(&ep->ep_lock);
	if ((fl & EPF_FLOW) && can_send(fd, 0))
		ev |= T_GODATA;
	if ((fl & EPF_EXFLOW) && can_send(fd, band))
		ev |= T_GOEXDATA;
	if (ev != 0) {
		pthread_mutex_lock(&ep->ep_lock);
		if (ev & T_GODATA)
			ep->ep_flags &= ~EPF_FLOW;
		if (ev & T_GOEXDATA)
			ep->ep_flags &= ~EPF_EXFLOW;
		pthread_mutex_unlock(&ep->ep_lock);
	}
	xti_put(ep);
	return ev;
}
