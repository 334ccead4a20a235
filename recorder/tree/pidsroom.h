/*
 * pidsroom.h - how many more processes may be made here, so that rt steps
 * aside where its own would take what the job needs.
 *
 * Wrapped, rt makes 2 to 5 processes of its own (the guardian and the job
 * are two where the job alone was one; the recorder; the printer, the
 * uploader and the pushers). Under a pids cgroup or RLIMIT_NPROC that
 * leaves little room, those are the job's forks that then fail.
 */
#ifndef RT_PIDSROOM_H
#define RT_PIDSROOM_H

#include <stddef.h>

/* Below this many processes of room, a wrapped job runs untracked. */
#define RT_PIDS_ROOM_MIN 32

/*
 * The number of processes (tasks: threads count) that may still be made:
 * the least room of the pids cgroups this process is in (each ancestor's
 * pids.max - pids.current, v1 or v2) and of RLIMIT_NPROC for a user other
 * than root (its limit less the user's tasks). -1 when nothing limits it;
 * why says which limit, when one does.
 */
long rt_pids_room(char *why, size_t cap);

#endif
