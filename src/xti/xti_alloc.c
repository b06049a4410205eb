/*
 * xti_alloc.c -- t_alloc, t_free.
 *
 * t_alloc() allocates one of the XTI structures and, for each netbuf the
 * fields argument names, a buffer of the size the endpoint's provider
 * gives for it (t_info: addr, options, tsdu for T_UNITDATA's data,
 * connect/discon for T_CALL's and T_DIS's).  A size of 0 gives no buffer.
 * T_INVALID (the provider does not support the field) or T_INFINITE (no
 * limit: no size to allocate) fail with TSYSERR/EINVAL when the field is
 * named explicitly; with T_ALL such a field is left without a buffer
 * (buf NULL, maxlen 0), so that T_ALL works on every provider.  T_INFO
 * needs no endpoint.  t_free() frees the buffers the structure points to
 * and the structure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xti_impl.h"

static int nb_alloc(struct netbuf *nb, t_scalar_t size, int fields)
{
	nb->len = 0;
	nb->maxlen = 0;
	nb->buf = NULL;
	if (size == 0)
		return 0;
	if (size < 0) {
		if (fields == T_ALL)
			return 0;
		return xti_syserr(EINVAL);
	}
	nb->buf = calloc(1, (size_t)size);
	if (nb->buf == NULL)
		return xti_syserr(ENOMEM);
	nb->maxlen = (unsigned int)size;
	return 0;
}

static t_scalar_t larger(t_scalar_t a, t_scalar_t b)
{
	if (a == T_INFINITE || b == T_INFINITE)
		return T_INFINITE;
	return a > b ? a : b;
}

static int fill(void *p, int type, int fields, const struct T_info_ack *ia)
{
	struct t_bind *b = p;
	struct t_optmgmt *o = p;
	struct t_call *c = p;
	struct t_discon *d = p;
	struct t_unitdata *u = p;
	struct t_uderr *e = p;
	int r = 0;

	switch (type) {
	case T_BIND:
		if (fields & T_ADDR)
			r = nb_alloc(&b->addr, ia->ADDR_size, fields);
		return r;
	case T_OPTMGMT:
		if (fields & T_OPT)
			r = nb_alloc(&o->opt, ia->OPT_size, fields);
		return r;
	case T_CALL:
		if (r == 0 && (fields & T_ADDR))
			r = nb_alloc(&c->addr, ia->ADDR_size, fields);
		if (r == 0 && (fields & T_OPT))
			r = nb_alloc(&c->opt, ia->OPT_size, fields);
		if (r == 0 && (fields & T_UDATA))
			r = nb_alloc(&c->udata, larger(ia->CDATA_size,
						       ia->DDATA_size), fields);
		return r;
	case T_DIS:
		if (fields & T_UDATA)
			r = nb_alloc(&d->udata, ia->DDATA_size, fields);
		return r;
	case T_UNITDATA:
		if (r == 0 && (fields & T_ADDR))
			r = nb_alloc(&u->addr, ia->ADDR_size, fields);
		if (r == 0 && (fields & T_OPT))
			r = nb_alloc(&u->opt, ia->OPT_size, fields);
		if (r == 0 && (fields & T_UDATA))
			r = nb_alloc(&u->udata, ia->TSDU_size, fields);
		return r;
	case T_UDERROR:
		if (r == 0 && (fields & T_ADDR))
			r = nb_alloc(&e->addr, ia->ADDR_size, fields);
		if (r == 0 && (fields & T_OPT))
			r = nb_alloc(&e->opt, ia->OPT_size, fields);
		return r;
	default:
		return 0;
	}
}

static size_t struct_size(int type)
{
	switch (type) {
	case T_BIND:
		return sizeof(struct t_bind);
	case T_OPTMGMT:
		return sizeof(struct t_optmgmt);
	case T_CALL:
		return sizeof(struct t_call);
	case T_DIS:
		return sizeof(struct t_discon);
	case T_UNITDATA:
		return sizeof(struct t_unitdata);
	case T_UDERROR:
		return sizeof(struct t_uderr);
	case T_INFO:
		return sizeof(struct t_info);
	default:
		return 0;
	}
}

void *t_alloc(int fd, int struct_type, int fields)
{
	struct T_info_ack ia;
	struct xti_ep *ep;
	size_t size = struct_size(struct_type);
	void *p;

	memset(&ia, 0, sizeof(ia));
	if (struct_type != T_INFO) {
		ep = xti_get(fd);
		if (ep == NULL)
			return NULL;
		pthread_mutex_lock(&ep->ep_lock);
		ia = ep->ep_info;
		pthread_mutex_unlock(&ep->ep_lock);
		xti_put(ep);
	}
	if (size == 0) {
		xti_err(TNOSTRUCTYPE);
		return NULL;
	}
	p = calloc(1, size);
	if (p == NULL) {
		xti_syserr(ENOMEM);
		return NULL;
	}
	if (struct_type != T_INFO && fill(p, struct_type, fields, &ia) != 0) {
		int te = t_errno, e = errno;
		t_free(p, struct_type);
		t_errno = te;
		errno = e;
		return NULL;
	}
	return p;
}

int t_free(void *ptr, int struct_type)
{
	struct t_bind *b = ptr;
	struct t_optmgmt *o = ptr;
	struct t_call *c = ptr;
	struct t_discon *d = ptr;
	struct t_unitdata *u = ptr;
	struct t_uderr *e = ptr;

	if (struct_size(struct_type) == 0)
		return xti_err(TNOSTRUCTYPE);
	if (ptr == NULL)
		return 0;
	switch (struct_type) {
	case T_BIND:
		free(b->addr.buf);
		break;
	case T_OPTMGMT:
		free(o->opt.buf);
		break;
	case T_CALL:
		free(c->addr.buf);
		free(c->opt.buf);
		free(c->udata.buf);
		break;
	case T_DIS:
		free(d->udata.buf);
		break;
	case T_UNITDATA:
		free(u->addr.buf);
		free(u->opt.buf);
		free(u->udata.buf);
		break;
	case T_UDERROR:
		free(e->addr.buf);
		free(e->opt.buf);
		break;
	default:
		break;
	}
	free(ptr);
	return 0;
}
