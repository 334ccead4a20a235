/*
 * net.c - interfaces from /proc/net/dev (all but lo) with their static
 * identity from /sys/class/net. operstate is re-read once a second (one
 * pread per NIC) so a link going up or down starts a new inventory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/sysroot.h"

/* The source's own state (the collector holds it as `self`). */
struct net_state {
	int fd_netdev;
	int fd_oper[RT_MAX_NICS]; /* operstate per NIC slot */
	struct rt_netdev nd[RT_MAX_NETDEVS];
	size_t nnd;
	int nic_line[RT_MAX_NICS]; /* /proc/net/dev line of each NIC slot */
	uint64_t nic_names_hash;
};

static int net_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct net_state *me = calloc(1, sizeof(*me));
	if (!me)
		return -ENOMEM;
	*self = me;
	me->fd_netdev = rt_open(RT_PROC, "net/dev");
	for (int i = 0; i < RT_MAX_NICS; i++)
		me->fd_oper[i] = -1;
	me->nic_names_hash = 1; /* never a real hash: the first read builds */
	return 0;
}

static void net_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct net_state *me = self;
	if (!me)
		return;
	rt_close_fd(&me->fd_netdev);
	for (int i = 0; i < RT_MAX_NICS; i++)
		rt_close_fd(&me->fd_oper[i]);
	free(me);
}

static void net_read(struct rt_collector *c, void *self, int *changed)
{
	struct net_state *me = self;
	size_t len;
	me->nnd = 0;
	if (rt_read_fd(c, me->fd_netdev, &len) == 0)
		me->nnd = rt_parse_netdev(c->buf, len, me->nd, RT_MAX_NETDEVS);
	uint64_t h = RT_NAME_HASH_INIT;
	for (size_t i = 0; i < me->nnd; i++)
		h = rt_name_hash(h, me->nd[i].name);
	if (h != me->nic_names_hash) {
		me->nic_names_hash = h;
		*changed = 1;
	}
	for (unsigned i = 0; i < c->inv->nnic && !*changed && c->slow; i++) {
		char st[32];
		if (me->fd_oper[i] < 0)
			continue;
		ssize_t n = rt_pread_once(me->fd_oper[i], st, sizeof(st));
		while (n > 0 && (st[n - 1] == '\n' || st[n - 1] == ' '))
			st[--n] = '\0';
		if (n >= 0 && strcmp(st, c->inv->nic[i].operstate) != 0)
			*changed = 1;
	}
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct rt_netdev *nd = arg;
	return strcmp(nd[*(const int *)a].name, nd[*(const int *)b].name);
}

static void net_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	(void)c;
	struct net_state *me = self;
	/* network[] is sorted by interface name, as in the reference */
	int idx[RT_MAX_NETDEVS];
	for (size_t i = 0; i < me->nnd; i++)
		idx[i] = (int)i;
	qsort_r(idx, me->nnd, sizeof(int), by_name, me->nd);
	for (int i = 0; i < RT_MAX_NICS; i++)
		rt_close_fd(&me->fd_oper[i]);
	for (size_t k = 0; k < me->nnd && inv->nnic < RT_MAX_NICS; k++) {
		size_t i = (size_t)idx[k];
		const char *name = me->nd[i].name;
		if (!strcmp(name, "lo"))
			continue;
		unsigned slot = inv->nnic++;
		struct rt_inv_nic *n = &inv->nic[slot];
		char v[256], rel[256], p[4096], link[4096];
		rt_copy_text(n->name, sizeof(n->name), name);
		rt_sys_attr(n->mac, sizeof(n->mac), "class/net/%s/%s", name, "address");
		rt_sys_attr(n->operstate, sizeof(n->operstate), "class/net/%s/%s", name,
		            "operstate");
		rt_sys_attr(v, sizeof(v), "class/net/%s/%s", name, "mtu");
		int64_t x;
		if (rt_parse_attr_i64(v, strlen(v), &x) == 0 && x >= 0 && x <= UINT32_MAX) {
			n->mtu = (uint32_t)x;
			n->has_mtu = 1;
		}
		rt_sys_attr(v, sizeof(v), "class/net/%s/%s", name, "speed");
		if (rt_parse_attr_i64(v, strlen(v), &x) == 0) {
			n->speed_mbps = x;
			n->has_speed = 1;
		}
		snprintf(rel, sizeof(rel), "class/net/%s/device/driver", name);
		if (rt_path(p, sizeof(p), RT_SYS, rel) == 0) {
			ssize_t l = readlink(p, link, sizeof(link) - 1);
			if (l > 0) {
				link[l] = '\0';
				const char *b = strrchr(link, '/');
				b = b ? b + 1 : link;
				rt_strlcpy_n(n->driver, sizeof(n->driver), b, strlen(b));
			}
		}
		snprintf(rel, sizeof(rel), "class/net/%s/device", name);
		n->physical = rt_path(p, sizeof(p), RT_SYS, rel) == 0 && access(p, F_OK) == 0;
		snprintf(rel, sizeof(rel), "class/net/%s/operstate", name);
		me->fd_oper[slot] = rt_open(RT_SYS, rel);
		me->nic_line[slot] = (int)i;
	}
}

static void net_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct net_state *me = self;
	if (me->nnd)
		rec->h->flags |= RT_REC_HAS_NETDEV;
	for (unsigned i = 0; i < rec->h->nnic; i++) {
		int line = me->nic_line[i];
		if (line < 0 || (size_t)line >= me->nnd ||
		    strcmp(me->nd[line].name, c->inv->nic[i].name))
			continue;
		const struct rt_netdev *s = &me->nd[line];
		struct rt_rec_nic *n = &rec->nic[i];
		n->rx_bytes = s->rx_bytes;
		n->tx_bytes = s->tx_bytes;
		n->rx_packets = s->rx_packets;
		n->tx_packets = s->tx_packets;
		n->rx_errs = s->rx_errs;
		n->tx_errs = s->tx_errs;
		n->rx_drop = s->rx_drop;
		n->tx_drop = s->tx_drop;
	}
}

const struct rt_source rt_source_net = {.name = "net",
                                        .open = net_open,
                                        .read = net_read,
                                        .inventory = net_inventory,
                                        .fill = net_fill,
                                        .close = net_close};
