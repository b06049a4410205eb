/*
 * fuzz_lfc -- libFuzzer target for the records of /dev/udp's local flow
 * control (src/transport/inet_lfc.c), which another process writes.
 *
 * How this works
 * --------------
 * The input is a record file's contents.  It is written where a
 * receiver on 127.0.0.1:7 would publish its record, locked as a live
 * receiver holds it, and a sender looks it up, reserves room, takes it
 * back, charges and waits as a flush does.
 * A record that is not one (too short, wrong magic, version, family,
 * port, state or address) must be refused: lfc_lookup gives NULL.  One
 * that passes may say anything; the sender must still reserve 0 to n
 * messages of n and get retry delays within LFC_DELAY_MAX (the stall that ends
 * a wait is time-based: test_inet_udp_lfc's test_lying_record).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inet_lfc.h"

#define PORT	7		/* a port nothing here binds */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	struct stat st;
	struct lfc_send s;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	bool full;
	int fd;

	if (stat("/proc/thread-self/ns/net", &st) != 0)
		return 0;
	snprintf(path, sizeof(path), "/dev/shm/streams-udp-%lu-4-%u",
		 (unsigned long)st.st_ino, PORT);
	(void)unlink(path);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
		return 0;
	/* held, as by a live receiver */
	if ((size > 0 && write(fd, data, size) != (ssize_t)size) ||
	    fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&s, 0, sizeof(s));
	struct lfc_peer *p = lfc_lookup(&s, (struct sockaddr *)&to,
					sizeof(to), &full);
	if (p != NULL) {
		uint64_t cost[3] = { lfc_cost(100, 0), 0, lfc_cost(4000, 1000) };
		int n = lfc_reserve(p, cost, 3);

		if (n < 0 || n > 3)
			abort();
		for (int i = 0; i < n; i++)
			lfc_unsend(p, cost[i]);
		lfc_charge(p, cost[0]);
		for (int i = 0; i < 4; i++) {
			uint64_t d = lfc_wait(&s, p);

			if (d > 1000000)	/* LFC_DELAY_MAX */
				abort();
		}
		lfc_sent(&s);
	}
	/* short records are refused */
	if (p != NULL && size < 4096)
		abort();
	lfc_unpin(&s);
	lfc_send_free(&s);
	close(fd);
	unlink(path);
	return 0;
}
