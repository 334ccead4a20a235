/*
 * cgjob.h - a job known by its cgroup (--cgroup PATH, and each job of the
 * node mode, --jobs): where the group is in every hierarchy, who it is in
 * its scheduler's terms, and its members (every process of the group and
 * of the groups below it: a Slurm job's steps and tasks, a pod's
 * containers, fold into it).
 *
 * Discovery (which groups exist, what they are called) is kept apart from
 * reading (the cgroup source reads the group's counters, the process tree
 * its members); nothing here writes to a cgroup.
 */
#ifndef RT_CGJOB_H
#define RT_CGJOB_H

#include <stddef.h>
#include <sys/types.h>

#include "procfs.h"
#include "rt/fmt.h"

/* What the last walk of a group's members read and left unread. */
enum { RT_CGWALK_DEPTH = 1, RT_CGWALK_GROUPS = 2, RT_CGWALK_MEMBERS = 4, RT_CGWALK_ENV = 8 };
struct rt_cgjob_walk {
	unsigned groups; /* groups whose cgroup.procs were read */
	int cut;         /* RT_CGWALK_*: a bound left groups or members unread */
	int err;         /* -errno that hid members (EMFILE...), -ENOENT: gone; 0 */
};

struct rt_cgjob {
	/* the group in each hierarchy it exists in ("" where it does not);
	 * v2 is the unified one, at fs/cgroup or fs/cgroup/unified */
	struct rt_cgroup_paths cp;
	char path[512];         /* the group, relative to its hierarchies */
	char members_mount[32]; /* the hierarchy whose cgroup.procs list it ("": v2 at the top) */
	/* who it is: scheduler "slurm", "kubernetes", "systemd" or "" */
	char scheduler[16];
	char job_id[96]; /* Slurm job id or SLUID, the pod's uid, the unit's name */
	char uid[16];    /* Slurm v1's uid_N level: the job's owner */
	char qos[16];    /* Kubernetes: besteffort, burstable, guaranteed */
	int dfd;         /* the group's directory in members_mount, kept; -1 */
	int lean;        /* dfd closed after each use (the node's budget) */
	/* the groups the last walk found (cgjob.c), read again while each
	 * one's link count is the same; groups_ok: whole, groups_cut: the
	 * bounds its listing hit */
	struct rt_buf groups;
	int groups_ok, groups_cut;
	struct rt_cgjob_walk walk; /* the last rt_cgjob_members */
};

/*
 * Find the group spec names: a path under the cgroup mount
 * (/sys/fs/cgroup/memory/slurm/...), a path relative to the hierarchies
 * (/slurm/uid_0/job_5), or a line of /proc/PID/cgroup (4:memory:/x,
 * 0::/x). 0, or -1 with one line in err (what was wrong, what to do).
 */
int rt_cgjob_resolve(const char *spec, struct rt_cgjob *j, char *err, size_t cap);

/* The group looked for again in every hierarchy while it is young (its
 * scheduler makes it in one controller after another, and a new parent
 * with it: Slurm's jobacct cpuacct group can come a second later). 1
 * when it is in more hierarchies now. */
int rt_cgjob_recheck(struct rt_cgjob *j, int young);

/* The inode of the group's directory (in the hierarchy that lists its
 * members): a group made anew at the same path has another. 0: unknown. */
uint64_t rt_cgjob_ino(struct rt_cgjob *j);

/* The CPUs the group's cpuset gives it (v1 cpuset.effective_cpus, v2
 * cpuset.cpus.effective), 0 when it has none. */
unsigned rt_cgjob_cpuset_count(const struct rt_cgjob *j);

/* Who the group at a hierarchy-relative path is, from the layouts of
 * Slurm (v1, v2, multiple-slurmd, SLUID), Kubernetes (systemd and
 * cgroupfs drivers) and systemd. Pure: any bytes in, bounded. */
void rt_cgjob_classify(const char *path, struct rt_cgjob *j);
/* The node mode's presets (--jobs NAME: slurm, kubernetes, systemd,
 * podman, docker): the layouts of that scheduler's job groups, globs
 * relative to the hierarchies (NULL-terminated, each a layout
 * rt_cgjob_classify knows); NULL for any other name. */
const char *const *rt_cgjob_preset(const char *name);

/* The container id a pod's part names (its group's directory: <id>
 * under cgroupfs; cri-containerd-<id>.scope, crio-<id>.scope,
 * docker-<id>.scope under systemd; libpod-<id> as podman places one under
 * a pod's parent) into id. 0, or -1 when dir names no container (CRI-O's
 * crio-conmon-<id>.scope, say). Pure. */
int rt_cgjob_part_container(const char *dir, char *id, size_t cap);

/*
 * The group's members now: every pid in its cgroup.procs and in those of
 * the groups below it, at most cap (and at most 256: more is a cut,
 * RT_CGWALK_MEMBERS), 64 levels and 512 groups down (two
 * descriptors at most, whatever the depth). The count (j->walk says what
 * the bounds left unread, and an error that hid a subgroup's members);
 * -ENOENT when the group is gone (removed: its end); another -errno when
 * it could not be read now (EMFILE, ENOMEM, EACCES: not its end, retried).
 */
ssize_t rt_cgjob_members(struct rt_cgjob *j, pid_t *out, size_t cap);
/* The descriptor members keeps closed. */
void rt_cgjob_close(struct rt_cgjob *j);
/* Its directory closed and the groups it keeps freed. */
void rt_cgjob_free(struct rt_cgjob *j);

/* Who runs in the group, from its members' environments (where this
 * process may read them): the first member whose environment names the
 * scheduler's job (SLURM_JOB_ID, Kubernetes' HOSTNAME), else the first
 * readable one. Bounded: 64 members, 32 KiB of environment (RT_ENV_MAX),
 * kept in a block of its own length (a node's thousand jobs hold what
 * their environments hold, not 32 KiB each). */
#define RT_ENV_MAX 32768
struct rt_cgjob_who {
	pid_t member; /* whose environment env is; 0: none read */
	char *env;    /* NUL-separated, envlen bytes (malloc'd; NULL: none) */
	size_t envlen;
	char name[256];         /* SLURM_JOB_NAME, the pod's name, the unit; "" */
	char user[64];          /* SLURM_JOB_USER, else the member's uid; "" */
	char pod[128], ns[128]; /* a container's pod and namespace (its runtime's CRI
	                         * annotations); "" */
	int named;              /* env is the scheduler's job's (it names the job) */
};
/* Not reentrant: one thread identifies (it reads into one static buffer). */
void rt_cgjob_identify(struct rt_cgjob *j, struct rt_cgjob_who *who);
/* *to = *from, to's environment a copy of from's bytes (to's old one
 * freed; none when memory runs out). */
void rt_cgjob_who_copy(struct rt_cgjob_who *to, const struct rt_cgjob_who *from);
/* What who holds, freed (who stays valid, empty). */
void rt_cgjob_who_free(struct rt_cgjob_who *who);

/* A variable of a NUL-separated environment block of len bytes whose
 * value ends within it, or NULL. */
const char *rt_env_lookup(const char *env, size_t len, const char *name);

/* The hierarchies a cgroup may be in, as mount directories under
 * fs/cgroup ("" the top, a v2 mount or a tmpfs of v1 mounts), in the
 * order they are searched; NULL-terminated. */
extern const char *const rt_cgroup_mounts[];

/* Whether fs/cgroup<mount><path> is a directory (a group that exists). */
int rt_cgroup_exists(const char *mount, const char *path);

#endif
