/*===- hetero-rt/hrt.h - the hetero runtime C ABI ------------------*- C
-*-===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
|* libhetero_rt: communicators, point-to-point transfers and collectives over *|
|* MPI (host buffers) or NCCL (device buffers), for code that hetero lowers   *|
|* and for hand-written drivers. No MLIR dependency.                          *|
|*                                                                            *|
|* Every call returns a status. On failure, hrt_last_error() returns a        *|
|* message naming the rank, the operation, the byte count and the backend's  *|
|* own error text. A timeout (hrt_set_timeout, or the environment variable    *|
|* HETERO_RT_TIMEOUT in seconds) turns a peer that never arrives into         *|
|* HRT_ERROR_TIMEOUT instead of a hang.                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HETERO_RT_HRT_H
#define HETERO_RT_HRT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HRT_EXPORT __attribute__((visibility("default")))
#else
#define HRT_EXPORT
#endif

/* The enums below have int as their underlying type in C++ too, so that
 * the runtime can validate any value a caller passes (an out-of-range value
 * of an enum without a fixed type is undefined behaviour in C++). */
#ifdef __cplusplus
#define HRT_ENUM(name) enum name : int
#else
#define HRT_ENUM(name) enum name
#endif

typedef HRT_ENUM(hrt_status) {
  HRT_SUCCESS = 0,
  HRT_ERROR_INVALID_ARGUMENT = 1,
  HRT_ERROR_NOT_INITIALIZED = 2,
  HRT_ERROR_UNAVAILABLE = 3, /* backend not built into this library */
  HRT_ERROR_BACKEND = 4,     /* MPI or NCCL reported an error */
  HRT_ERROR_TIMEOUT = 5,     /* a peer did not arrive in time */
} hrt_status;

typedef HRT_ENUM(hrt_backend) {
  HRT_BACKEND_MPI = 0,  /* host buffers */
  HRT_BACKEND_NCCL = 1, /* device buffers; bootstrapped over MPI */
} hrt_backend;

typedef HRT_ENUM(hrt_dtype) {
  HRT_FLOAT32 = 0,
  HRT_FLOAT64 = 1,
  HRT_INT32 = 2,
  HRT_INT64 = 3,
  HRT_UINT8 = 4,
  HRT_FLOAT16 = 5,  /* IEEE half; reduced in float, rounded to even */
  HRT_BFLOAT16 = 6, /* bfloat16; reduced in float, rounded to even */
} hrt_dtype;

typedef HRT_ENUM(hrt_reduce_op) {
  HRT_SUM = 0,
  HRT_PROD = 1,
  HRT_MAX = 2,
  HRT_MIN = 3,
  HRT_AVG = 4,
} hrt_reduce_op;

typedef struct hrt_comm_impl *hrt_comm;
typedef struct hrt_request_impl *hrt_request;

/* Lifecycle. hrt_init initialises MPI if nobody has (argc/argv may be NULL). */
HRT_EXPORT hrt_status hrt_init(hrt_backend backend, int *argc, char ***argv);
HRT_EXPORT hrt_status hrt_finalize(void);
HRT_EXPORT int hrt_initialized(void);
/* Ends every process of the job with `code` (after a fatal error). */
HRT_EXPORT void hrt_abort(int code);

/* Seconds a blocking call may wait for its peers; 0 waits forever. */
HRT_EXPORT hrt_status hrt_set_timeout(double seconds);
HRT_EXPORT double hrt_get_timeout(void);

/* Errors. */
HRT_EXPORT const char *hrt_status_string(hrt_status status);
/* The message of the calling thread's most recent failure. */
HRT_EXPORT const char *hrt_last_error(void);
HRT_EXPORT size_t hrt_dtype_size(hrt_dtype dtype);

/* Communicators. hrt_comm_world's handle is owned by the runtime. */
HRT_EXPORT hrt_status hrt_comm_world(hrt_comm *comm);
HRT_EXPORT hrt_status hrt_comm_split(hrt_comm parent, int color, int key,
                                     hrt_comm *out);
HRT_EXPORT hrt_status hrt_comm_free(hrt_comm comm);
/* A communicator over `count` ranks of `parent`, listed in `ranks` (each
 * rank's position in the list is its rank in the result). Collective over
 * the listed ranks only: the other ranks of `parent` take no part and may be
 * busy meanwhile. Concurrent creations that share a rank need distinct
 * `tag`s (0 <= tag <= 32767). MPI backend only. */
HRT_EXPORT hrt_status hrt_comm_create_group(hrt_comm parent, const int *ranks,
                                            int count, int tag, hrt_comm *out);
HRT_EXPORT hrt_status hrt_comm_rank(hrt_comm comm, int *rank);
HRT_EXPORT hrt_status hrt_comm_size(hrt_comm comm, int *size);

/* Point to point. A request completes with hrt_wait, which frees it. */
HRT_EXPORT hrt_status hrt_isend(const void *buffer, size_t count,
                                hrt_dtype dtype, int peer, int tag,
                                hrt_comm comm, hrt_request *request);
HRT_EXPORT hrt_status hrt_irecv(void *buffer, size_t count, hrt_dtype dtype,
                                int peer, int tag, hrt_comm comm,
                                hrt_request *request);
HRT_EXPORT hrt_status hrt_wait(hrt_request *request);
HRT_EXPORT hrt_status hrt_send(const void *buffer, size_t count,
                               hrt_dtype dtype, int peer, int tag,
                               hrt_comm comm);
HRT_EXPORT hrt_status hrt_recv(void *buffer, size_t count, hrt_dtype dtype,
                               int peer, int tag, hrt_comm comm);
/* Buffered send: copies the message and returns at once; the runtime
 * completes it in the background (a send never waits for its receive, as
 * pipeline schedules assume). A failure is reported by a later call.
 * hrt_flush_sends waits for all of them (hrt_finalize does too);
 * hrt_sends_in_flight counts those not yet complete. With the NCCL backend
 * the copy is made on the device, and sends to higher ranks (with receives
 * from lower ones) run on a communicator and stream apart from those to
 * lower ranks, so that two ranks sending to each other never wait on one
 * another. */
HRT_EXPORT hrt_status hrt_bsend(const void *buffer, size_t count,
                                hrt_dtype dtype, int peer, int tag,
                                hrt_comm comm);
HRT_EXPORT hrt_status hrt_flush_sends(void);
HRT_EXPORT size_t hrt_sends_in_flight(void);
/* The stream of the calling thread's device work, from `current` (a
 * cudaStream_t; libhetero_rt_cuda registers hrt_cuda_stream when it
 * loads; NULL: none). With one registered, the NCCL backend orders each
 * operation after the work queued on that stream on the device, by an
 * event, instead of the caller waiting for it, and a buffered send's copy
 * before the work queued after it. */
HRT_EXPORT void hrt_register_compute_stream(void *(*current)(void));
/* Link emulation for the MPI backend, for experiments on one host: every
 * directed link (communicator, peer) carries one message at a time at
 * `megabytes_per_second` (2^20 bytes; 0: unlimited), and each message
 * arrives `latency_ms` after it has crossed. Receives hand a message over at
 * its arrival time on the host's monotonic clock. Every rank must use the
 * same setting; both 0 turn it off. hrt_init reads the environment variable
 * HETERO_RT_LINK="<MB/s>[,<latency ms>[,nic]]". All-reduces
 * (hrt_all_reduce, hrt_iall_reduce) take the time of a ring on the
 * communicator's own link: 2 (n - 1) latencies and 2 (n - 1) / n of the
 * buffer at the bandwidth, from the post, one collective at a time. With
 * `nic` (environment only), all the messages and collectives a rank sends
 * share one link, as on a machine with one network card. */
HRT_EXPORT hrt_status hrt_set_link_model(double megabytes_per_second,
                                         double latency_ms);

/* Collectives. `count` is per rank for all_gather and all_to_all (each rank
 * contributes `count` elements and receives size x count), and the result
 * size for reduce_scatter (each rank sends size x count). Send and receive
 * buffers may be the same for all_reduce. */
HRT_EXPORT hrt_status hrt_all_reduce(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_reduce_op op,
                                     hrt_comm comm);
/* Posts an all-reduce and returns at once; it completes with hrt_wait on
 * `request`. Neither buffer may be touched before then. Every rank of the
 * communicator posts its collectives in the same order. */
HRT_EXPORT hrt_status hrt_iall_reduce(const void *send, void *recv,
                                      size_t count, hrt_dtype dtype,
                                      hrt_reduce_op op, hrt_comm comm,
                                      hrt_request *request);
HRT_EXPORT hrt_status hrt_all_gather(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_comm comm);
HRT_EXPORT hrt_status hrt_reduce_scatter(const void *send, void *recv,
                                         size_t count, hrt_dtype dtype,
                                         hrt_reduce_op op, hrt_comm comm);
HRT_EXPORT hrt_status hrt_broadcast(void *buffer, size_t count, hrt_dtype dtype,
                                    int root, hrt_comm comm);
HRT_EXPORT hrt_status hrt_reduce(const void *send, void *recv, size_t count,
                                 hrt_dtype dtype, hrt_reduce_op op, int root,
                                 hrt_comm comm);
HRT_EXPORT hrt_status hrt_all_to_all(const void *send, void *recv, size_t count,
                                     hrt_dtype dtype, hrt_comm comm);
HRT_EXPORT hrt_status hrt_barrier(hrt_comm comm);

/* Wall-clock seconds since an arbitrary origin. */
HRT_EXPORT double hrt_wtime(void);

/*===----------------------------------------------------------------------===*
 * Adaptive pipeline schedules (Ada-Grouper). A planner holds candidate
 * plans (kFkB group sizes, or (k, b) plans: hrt_planner_create_plans),
 * moving averages (over `window` samples) of what this rank measured (its
 * stage's forward and backward times and the links into it, or one
 * forward, backward and transfer time for the whole pipeline), and every
 * `period` iterations gathers every rank's and picks the plan the pipeline
 * simulator finds fastest. The pick takes effect at the iteration boundary:
 * the plan in force changes only inside hrt_planner_end_iteration.
 *===----------------------------------------------------------------------===*/

typedef struct hrt_planner_impl *hrt_planner;

/* `group_sizes` lists `count` candidate k; the first is in force at start. */
HRT_EXPORT hrt_status hrt_planner_create(int stages, int microbatches,
                                         const int *group_sizes, int count,
                                         int period, int window,
                                         hrt_planner *planner);
HRT_EXPORT void hrt_planner_destroy(hrt_planner planner);
/* Measurements of this iteration, in milliseconds. */
HRT_EXPORT hrt_status hrt_planner_record_compute(hrt_planner planner,
                                                 double forward_ms,
                                                 double backward_ms);
HRT_EXPORT hrt_status hrt_planner_record_transfer(hrt_planner planner,
                                                  double ms);
/* Ends an iteration. Every `period` iterations the averages (over the ranks
 * of `comm` when it is not null, so that all ranks decide alike) are
 * simulated for each candidate; `*switched` says whether the plan changed. */
HRT_EXPORT hrt_status hrt_planner_end_iteration(hrt_planner planner,
                                                hrt_comm comm, int *switched);
/* Switch only to a plan the simulator finds faster than the one in force by
 * at least `fraction` (0 <= fraction < 1; 0, the default, takes any strict
 * gain): a predicted gain inside the noise of the measurements is not worth
 * changing the schedule for. */
HRT_EXPORT hrt_status hrt_planner_set_min_gain(hrt_planner planner,
                                               double fraction);
/* The group size in force, and its index among the candidates. */
HRT_EXPORT int hrt_planner_group_size(hrt_planner planner);
HRT_EXPORT int hrt_planner_plan_index(hrt_planner planner);

/* Plans over (k, b): groups of `group_size` micro-batches of
 * `microbatch_size` samples, `microbatches` of them per iteration. Stage
 * functions of a smaller size run each micro-batch as `tasks` consecutive
 * tasks (0 or 1: one task of the whole micro-batch). Measurements are per
 * task. */
typedef struct {
  int group_size;
  int microbatch_size;
  int microbatches;
  int tasks;
} hrt_plan;

/* A planner over `count` plans; the first is in force at start. Its cost
 * model is lib/Sim's PlanModel: per stage, forward and backward time as a
 * function of the micro-batch size (fitted over the sizes that ran); per
 * directed link, alpha + bytes x beta with bytes proportional to b. */
HRT_EXPORT hrt_status hrt_planner_create_plans(int stages,
                                               const hrt_plan *plans, int count,
                                               int period, int window,
                                               hrt_planner *planner);
/* This rank's stage and its mean forward and backward time per task in
 * this iteration, under the plan in force. */
HRT_EXPORT hrt_status hrt_planner_record_stage(hrt_planner planner, int stage,
                                               double forward_ms,
                                               double backward_ms);
/* A link into this rank's stage from stage `from_stage` as measured
 * (hrt_link_estimates): latency, time per byte, and the bytes of its
 * messages (one per task) under the plan in force. The latest counts. */
HRT_EXPORT hrt_status hrt_planner_record_link(hrt_planner planner,
                                              int from_stage, double alpha_ms,
                                              double ms_per_byte,
                                              double message_bytes);

typedef enum {
  /* Every stage and link with its own costs (the default). */
  HRT_PLANNER_PER_STAGE = 0,
  /* One forward, backward and message time for all, their means. */
  HRT_PLANNER_AVERAGED = 1,
} hrt_planner_model;
HRT_EXPORT hrt_status hrt_planner_set_model(hrt_planner planner,
                                            hrt_planner_model model);
/* Whether every rank's traffic crosses one link (a shaped or shared
 * network, as opposed to a full-duplex link per pair of stages): the
 * planner then queues all transfers on one medium. Off by default. */
HRT_EXPORT hrt_status hrt_planner_set_shared_medium(hrt_planner planner,
                                                    int shared);
/* The micro-batch size of the plan in force. */
HRT_EXPORT int hrt_planner_microbatch_size(hrt_planner planner);
/* The iteration time the last re-plan predicted for each plan, in ms (0
 * before the first); writes at most `count`, returns how many plans. */
HRT_EXPORT int hrt_planner_predictions(hrt_planner planner, double *ms,
                                       int count);

/* Measured times, in milliseconds, averaged since the last reset: forward
 * and backward tasks of compiled stage programs that report them
 * (hrt_mlir_task_mark), and the timed messages of buffered sends (time on
 * the link, queueing excluded; 0 unless links are measured: see below). The
 * planner's inputs. */
HRT_EXPORT void hrt_task_times(double *forward_ms, double *backward_ms,
                               double *transfer_ms);
HRT_EXPORT void hrt_task_times_reset(void);

/*===----------------------------------------------------------------------===*
 * Measured links. With measurement on (or under HETERO_RT_LINK), every
 * point-to-point message carries its sender's world rank and the time it was
 * posted. A receiver that was already waiting when a buffered send's message
 * (hrt_bsend: pipeline activations and gradients) arrived times it: from the
 * post, or from the arrival of the link's previous message when it queued
 * behind it, to the arrival. hrt_link_probe measures each link's latency
 * (half the shortest round trip of small messages, the peer's hold time
 * excluded; the least of the last 4 probes counts) and the offset between
 * the two clocks, which corrects the timings of a link between hosts (0 for
 * a peer under the same kernel). Estimates are kept per sender over the
 * last 32 timed messages.
 *===----------------------------------------------------------------------===*/

/* Turns measurement on or off. Every rank must agree: the messages'
 * format changes. Waits for the buffered sends in flight first. */
HRT_EXPORT hrt_status hrt_link_measure(int enable);
/* Round trips with each of `count` peers of `comm`, which must each call it
 * with this rank among theirs, at the same point of their programs. */
HRT_EXPORT hrt_status hrt_link_probe(hrt_comm comm, const int *peers,
                                     int count);

typedef struct {
  int sender;             /* world rank of the link's sender */
  int messages;           /* timed messages in the window */
  double alpha_ms;        /* latency: probed, else fitted (0 with one size) */
  double ms_per_byte;     /* the median time per byte beyond alpha */
  double message_bytes;   /* mean payload of the timed messages */
  double message_ms;      /* mean time of the timed messages */
  double clock_offset_ms; /* the sender's clock minus this rank's */
  int probed;             /* whether alpha and the offset come from a probe */
} hrt_link_estimate;

/* This rank's incoming links that have a timed message or a probe, by
 * sender; at most `capacity` are written, and the number there are is
 * returned. */
HRT_EXPORT int hrt_link_estimates(hrt_link_estimate *estimates, int capacity);
/* Forgets the timed messages (not the probes), as after a change of plan. */
HRT_EXPORT void hrt_link_estimates_reset(void);

/*===----------------------------------------------------------------------===*
 * Dynamic sync groups (SDPipe). The replicas of each pipeline stage average
 * their weights in groups that a coordinator forms from the workers that
 * became ready at about the same time (hetero/SyncGroups/Scheduler.h: a
 * window anchored on the first READY, connectivity of the last `period`
 * groups, one cross-stage enforcement token). The coordinator is a thread of
 * world rank 0: it needs no rank of its own, so the step's grid stays the
 * job, and its work (a union-find over N replicas per READY) is small next
 * to a step; it polls with short sleeps so that it never holds a core.
 * Each group averages over a communicator created among its members only
 * (hrt_comm_create_group) and cached: the coordinator keeps, per stage, an
 * LRU of member sets with the full group and the pairs pinned, and tells the
 * members of each group whether to create, reuse or evict, so that all
 * members of a set agree on its communicator. Requires the MPI backend with
 * MPI_THREAD_MULTIPLE.
 *===----------------------------------------------------------------------===*/

typedef struct hrt_sync_impl *hrt_sync;

typedef struct hrt_sync_options {
  /* P: the last `period` groups of a stage connect its replicas. */
  int period;
  /* 0: sliding (the paper), 1: periodic (the authors' artifact). */
  int periodic;
  /* 0: invalid candidates never wait for more workers. */
  int enforce;
  /* 0 turns the cross-stage enforcement token off (deadlock-prone). */
  int lock;
  /* T_max in milliseconds; a negative value measures it (the stage's
   * iteration time over N); INFINITY makes every group all replicas. */
  double window_max_ms;
  /* The measured T_max as a fraction of the iteration time; negative: 1/N. */
  double window_fraction;
  /* A worker silent this long while others wait for it is treated as
   * departed; 0 disables it. */
  double liveness_ms;
  /* Cached communicators per stage besides the pinned ones. */
  int cache_capacity;
} hrt_sync_options;

/* The defaults: P = 10, sliding, enforcement and lock on, measured T_max,
 * liveness off, capacity 32. */
HRT_EXPORT void hrt_sync_default_options(hrt_sync_options *options);

/* Collective over `world` (every worker): this rank is worker
 * (stage, replica) of a stages x replicas mesh, one rank per worker. */
HRT_EXPORT hrt_status hrt_sync_create(hrt_comm world, int stages, int replicas,
                                      int stage, int replica,
                                      const hrt_sync_options *options,
                                      hrt_sync *sync);
/* Reports READY after the local optimizer step and waits for this worker's
 * group; `final` marks its last sync. Returns the group's size and, when
 * `members` is not null, its replicas in ascending order (room for
 * `replicas` entries). */
HRT_EXPORT hrt_status hrt_sync_ready(hrt_sync sync, int final, int *group_size,
                                     int *members);
/* Averages `count` elements (f32 or f64) in place over the group of the last
 * hrt_sync_ready: the sum over the members, then times 1/size. */
HRT_EXPORT hrt_status hrt_sync_average(hrt_sync sync, void *buffer,
                                       size_t count, hrt_dtype dtype);
typedef struct hrt_sync_stats {
  long groups;            /* groups this worker was in */
  long members;           /* the sum of their sizes */
  long communicators;     /* communicators it created */
  long evictions;         /* cached communicators it freed */
  long enforced, ignored; /* the coordinator's counts (world rank 0) */
} hrt_sync_stats;
HRT_EXPORT hrt_status hrt_sync_get_stats(hrt_sync sync, hrt_sync_stats *stats);
/* Collective over the world of hrt_sync_create: stops the coordinator and
 * frees every cached communicator. */
HRT_EXPORT hrt_status hrt_sync_destroy(hrt_sync sync);

/*===----------------------------------------------------------------------===*
 * In-memory checkpoints (Gemini). Compiled steps open, send and commit them
 * (hrt_mlir_ckpt_*); a launcher configures where they live and recovers
 * from them before the first step.
 *===----------------------------------------------------------------------===*/

typedef struct hrt_ckpt_options {
  /* The directory of the checkpoint agents' sockets (agent-<rank>.sock);
   * NULL or "": the checkpoints live in the process and die with it. */
  const char *agents;
  /* The hetero-ckpt-agent program, started for a rank whose agent does not
   * answer; NULL or "": never start one. */
  const char *agent_program;
  /* Identifies the program: checkpoints of another are never restored. */
  unsigned long long fingerprint;
  /* Where the state lives besides the host buffers the step names (a GPU
   * run's device copies), or NULL: the host buffers are the state. Called
   * with `to_device` 0 for each tensor of a checkpoint as it opens, before
   * anything reads the buffer, and with 1 after a recovered checkpoint was
   * restored into it. */
  void (*copy_state)(void *host, long long bytes, int to_device);
} hrt_ckpt_options;

typedef struct hrt_ckpt_stats {
  long long commits;    /* checkpoints committed on every rank */
  long long incomplete; /* checkpoints some rank could not complete */
  long long chunks_sent, bytes_sent;
  long long chunks_received, bytes_received;
  long long last_committed_step; /* the step of the newest commit */
  long long restored_step;       /* the step hrt_ckpt_recover restored, or 0 */
  double commit_wait_seconds;    /* time spent in commits */
} hrt_ckpt_stats;

/* Connects this rank to its agent, starting it when none answers and
 * `agent_program` is given. Not collective. */
HRT_EXPORT hrt_status hrt_ckpt_configure(const hrt_ckpt_options *options);
/* Collective over the world: finds the newest step after `newer_than`
 * whose checkpoint of every rank's shard is complete and intact in some
 * rank's memory, fetches
 * this rank's shard (from its own memory, else from a peer's), and has the
 * compiled step restore it when it opens the checkpoint of that step.
 * `*step` is that step (run it next), or -1 when there is none;
 * `*from_peer` is 1 when this rank's shard came from a peer. */
HRT_EXPORT hrt_status hrt_ckpt_recover(long long newer_than, long long *step,
                                       int *from_peer);
HRT_EXPORT hrt_status hrt_ckpt_get_stats(hrt_ckpt_stats *stats);
/* Collective over the world, after the last step: releases the
 * checkpoints and, when `stop_agent`, stops this rank's agent. */
HRT_EXPORT hrt_status hrt_ckpt_finish(int stop_agent);
/* Runs a checkpoint agent on `socket_path` until it is told to quit
 * (hetero-ckpt-agent). Returns 0, or 1 after printing why it cannot. */
HRT_EXPORT int hrt_ckpt_agent_main(const char *socket_path);

/*===----------------------------------------------------------------------===*
 * ZERO-resizing (docs/resizing.md): the contraction columns of each prunable
 * layer this rank computes, as hetero.prune_plan asks for them.
 *===----------------------------------------------------------------------===*/

/* The ranks in `ranks` (a mask of world ranks 0..63; 0: every rank) prune
 * `ratio` (in [0, 1); 0 turns resizing off) of every prunable layer's
 * contraction columns, floor(ratio x columns) and at least one column kept.
 * The columns are drawn the ZERO-Rd way from `seed`, the layer and the
 * epoch, anew every `epoch_iterations` iterations (0: never). */
HRT_EXPORT hrt_status hrt_resize_configure(double ratio,
                                           unsigned long long ranks,
                                           long long epoch_iterations,
                                           unsigned long long seed);
/* Lightweight migration (docs/resizing.md), for a module partitioned by
 * hetero-partition-tp{migration=true}. Collective over `group` (the
 * tensor-parallel ranks of one replica of one stage), after
 * hrt_resize_configure: the ranks in `ranks` (world ranks, 0: every rank)
 * hand `ratio` (in [0, 1)) of every prunable layer's contraction columns to
 * the ranks of the group that do not migrate, which compute them and
 * return them with the layer's collective. The migrated columns are the
 * floor(ratio x columns) of the draw before the pruned ones; the receivers
 * split them in blocks in virtual rank order (rank - migrating rank) mod n.
 * Fails when every rank of the group would migrate. */
HRT_EXPORT hrt_status hrt_resize_configure_migration(hrt_comm group,
                                                     double ratio,
                                                     unsigned long long ranks);
/* What the online planner has a straggler do. */
typedef HRT_ENUM(hrt_resize_policy) {
  HRT_RESIZE_PRUNE = 0,   /* ZERO: prune Eq. 1's share */
  HRT_RESIZE_MIGRATE = 1, /* MIG: migrate Eq. 1's share (against the
                             fastest rank) to the others */
  HRT_RESIZE_SEMI = 2,    /* SEMI (Algorithm 2'): a single straggler
                             prunes a tolerable share (<= 0.5) and splits a
                             heavier one between pruning and migration by
                             Eq. 2, with the extraction cost fitted to the
                             group's history; of several, the slowest that
                             gain more than migrating costs (Eq. 3)
                             migrate and the rest prune */
} hrt_resize_policy;
/* ZERO-resizing's online planner (Eq. 1): every rank of `group` (the
 * tensor-parallel ranks of one replica of one stage) prunes (or, with
 * HRT_RESIZE_MIGRATE, migrates; with HRT_RESIZE_SEMI, both) the share of
 * its contraction columns that makes its busy time meet T_ref, the mean
 * (target 0) or the minimum (target 1; the only one for migration) of the
 * group's; a rank within 5% of T_ref prunes and migrates nothing. SEMI
 * also re-plans when its first extraction costs arrive and at every epoch
 * boundary. Columns as in
 * hrt_resize_configure; nothing is pruned or migrated before the first
 * hrt_resize_end_iteration. */
HRT_EXPORT hrt_status hrt_resize_configure_online(hrt_comm group, int target,
                                                  int policy,
                                                  long long epoch_iterations,
                                                  unsigned long long seed);
/* ZERO-Pri and ZERO-PriDiff (docs/resizing.md), after hrt_resize_configure
 * or hrt_resize_configure_online with epoch_iterations >= 1: a layer's
 * pruned columns are those whose weight rows (hrt_mlir_observe_weight)
 * changed least over the last epoch, the change measured between copies
 * taken at the last iteration of each epoch; a column this rank pruned in
 * at least half of an epoch's iterations keeps its previous statistic.
 * Until a layer's first epoch is measured its columns are drawn as
 * ZERO-Rd's. With `epsilon` > 0 (PriDiff) a pruning rank prunes
 * min(31/32, max(ratio, 0.8 x the share of the layer's columns whose change
 * is below epoch_iterations x epsilon)) of each layer. Each rank ranks its
 * own shard's columns, so this excludes migration. */
HRT_EXPORT hrt_status hrt_resize_configure_priority(double epsilon);
/* What hrt_mlir_prune_plan answered since the last configuration: the
 * columns asked for, kept and migrated over all its calls, the time of
 * the GEMMs this rank ran for other ranks' migrated columns, and how often
 * an epoch's change ranked a layer's columns (ZERO-Pri). */
typedef struct hrt_resize_stats {
  long long columns_asked;
  long long columns_kept;
  long long columns_migrated;
  double migrated_gemm_seconds;
  long long rankings;
} hrt_resize_stats;
HRT_EXPORT hrt_status hrt_resize_get_stats(hrt_resize_stats *stats);
/* Starts iteration `iteration`: a layer's columns stay fixed from the first
 * hrt_mlir_prune_plan of an iteration to the next call of this. With
 * priority pruning and migration, collective over the migration group when
 * an epoch starts: the ranks rank their layers and exchange the statistics,
 * so that the receivers of a source's columns split them as it does. */
HRT_EXPORT hrt_status hrt_resize_begin_iteration(long long iteration);
/* Collective over the online planner's group, after an iteration: the ranks
 * exchange their busy time (the iteration less the time compiled code was
 * blocked in communication or ran GEMMs for other ranks' migrated columns)
 * and the time of their resized GEMMs (hrt_mlir_gemm_mark), both as if
 * nothing had been pruned or migrated. When some rank's busy time moved by
 * more than 10% since the last plan (or there is none), every rank takes
 * its shares from Eq. 1 for the next iteration. Writes the group's pruned
 * shares to `ratios` and migrated shares to `migrated` (either may be
 * NULL) in group rank order (up to `capacity`) and sets `changed` when a
 * share changed. */
HRT_EXPORT hrt_status hrt_resize_end_iteration(double *ratios, double *migrated,
                                               int capacity, int *changed);
/* SEMI's pre-test (Algorithm 2, line 1), before training: the next
 * iteration runs with rank `rank` of the online planner's group pruning
 * `prune` and migrating `migrate` of its columns and the others whole (or,
 * with rank -1, every rank pruning `prune` and none migrating). Its
 * hrt_resize_end_iteration records the extraction and communication it
 * measured as samples of Eq. 2 and 3's cost curves and plans nothing. Needs
 * hrt_resize_configure_online with HRT_RESIZE_SEMI. */
HRT_EXPORT hrt_status hrt_resize_pretest(int rank, double prune,
                                         double migrate);
/* Ends the pre-test: forgets the columns, kept products and priority
 * statistics its iterations left, keeps the cost samples, and writes the
 * fitted extraction cost E and Comm at `share` (either may be NULL). */
HRT_EXPORT hrt_status hrt_resize_end_pretest(double share, double *extract_ms,
                                             double *communicate_ms);

/*===----------------------------------------------------------------------===*
 * Timelines of measured iterations. Between hrt_timeline_begin_iteration
 * and hrt_timeline_gather each rank records, in hrt_wtime seconds:
 *   - each task a compiled stage program reports (hrt_mlir_task_mark), from
 *     the later of the previous mark (or the begin) and the end of the last
 *     communication call since, to its mark;
 *   - each communication call of compiled code (the hrt_mlir_ sends,
 *     receives, waits and blocking collectives), from its entry to its
 *     return;
 *   - each collective that compiled code posts without waiting, at its
 *     post, and on the communication thread from its start to its end
 *     (neither bounds a task: the rank computes meanwhile).
 * A rank keeps at most HRT_TIMELINE_MAX_SPANS spans an iteration and counts
 * the ones after as dropped. Recording costs a lock and a copy per span,
 * and nothing before the first hrt_timeline_begin_iteration. hrt_wtime is
 * each host's own clock: the spans of ranks on different hosts line up only
 * as well as the hosts' clocks agree.
 *===----------------------------------------------------------------------===*/

typedef HRT_ENUM(hrt_timeline_kind) {
  HRT_TIMELINE_FORWARD = 0,    /* a forward task */
  HRT_TIMELINE_BACKWARD = 1,   /* a backward task */
  HRT_TIMELINE_SEND = 2,       /* a point-to-point send (buffered) */
  HRT_TIMELINE_RECV = 3,       /* a blocking point-to-point receive */
  HRT_TIMELINE_WAIT = 4,       /* waiting for a posted collective */
  HRT_TIMELINE_COLLECTIVE = 5, /* a blocking collective */
  HRT_TIMELINE_POSTED = 6,     /* a collective posted without waiting: an
                                  instant (start = end) */
  HRT_TIMELINE_BACKGROUND = 7, /* a posted collective running on the
                                  communication thread */
} hrt_timeline_kind;

typedef struct hrt_timeline_span {
  double start; /* hrt_wtime seconds on the rank that recorded it */
  double end;
  int rank; /* that rank, in the communicator of hrt_timeline_gather */
  int kind; /* hrt_timeline_kind */
  long long microbatch; /* tasks: the micro-batch, or -1 when unknown;
                           posted and background collectives: their bytes;
                           other communication: -1 */
} hrt_timeline_span;

#define HRT_TIMELINE_MAX_SPANS 65536

/* "forward", "backward", "send", "recv", "wait", "collective", "posted",
 * "background". */
HRT_EXPORT const char *hrt_timeline_kind_string(hrt_timeline_kind kind);

/* Drops this rank's spans and starts recording the next iteration's. */
HRT_EXPORT hrt_status hrt_timeline_begin_iteration(void);
/* Collective over `comm`: stops recording, and gathers the spans every rank
 * recorded since its hrt_timeline_begin_iteration on rank 0 of `comm`,
 * rank by rank, each rank's in the order recorded. On rank 0, `*spans`
 * points to `*count` spans owned by the runtime, valid until the next
 * hrt_timeline_gather, and `*dropped` (when not NULL) counts the spans that
 * all ranks dropped; other ranks get a null `*spans` and zero counts. */
HRT_EXPORT hrt_status hrt_timeline_gather(hrt_comm comm,
                                          const hrt_timeline_span **spans,
                                          size_t *count, size_t *dropped);

/*===----------------------------------------------------------------------===*
 * Training text (hetero.corpus_batch) and text generation
 * (hetero.sample_context, hetero.sample_next). Per process, not thread-safe.
 *===----------------------------------------------------------------------===*/

/* The corpus read when none was opened: a text every Debian system has. */
#define HRT_DEFAULT_CORPUS "/usr/share/common-licenses/GPL-3"

/* Reads the corpus: the bytes of the file at `path`. An unreadable or empty
 * file is an error. */
HRT_EXPORT hrt_status hrt_data_open(const char *path);
/* The character of each of the `vocab` token ids (2..256): ids number the
 * corpus's bytes by decreasing frequency (ties by byte value); when there
 * are more distinct bytes than ids, the last id stands for all the rarer
 * ones and reads '?', as do ids no byte has. */
HRT_EXPORT hrt_status hrt_data_vocabulary(long long vocab, char *bytes);
/* `sequences` windows of `tokens` token ids and the same windows shifted by
 * one character (the next-token targets), row-major. The corpus is split
 * into `replicas` contiguous shards and replica `replica` reads its own;
 * each window's offset is a hash of (step, micro-batch, sequence, replica),
 * the same in every run. */
HRT_EXPORT hrt_status hrt_data_batch(long long step, long long replica,
                                     long long microbatch, long long replicas,
                                     long long vocab, long long sequences,
                                     long long tokens, int *input, int *target);
/* Starts a generation: every stream begins with `prompt`; each next token
 * is the most likely one at temperature 0, else drawn from the softmax of
 * logits / temperature with a generator seeded by `seed`. Defaults: "The ",
 * 0.8, seed 0. */
HRT_EXPORT hrt_status hrt_sample_begin(const char *prompt, double temperature,
                                       unsigned long long seed);
/* The last `tokens` characters of each of `streams` streams as token ids,
 * left-aligned and padded with id 0 (row-major, streams x tokens). The
 * first call fixes the number of streams. */
HRT_EXPORT hrt_status hrt_sample_context(long long vocab, long long streams,
                                         long long tokens, int *context);
/* Appends one token to each stream, chosen from the logits (rows x vocab,
 * one row per position of the last context) at the stream's last position;
 * `*log_probability` is the chosen tokens' mean log-probability under the
 * model. */
HRT_EXPORT hrt_status hrt_sample_next(const float *logits, long long rows,
                                      long long vocab, float *log_probability);
/* The generated streams: how many, and the text of one (prompt included;
 * null for a stream that does not exist). */
HRT_EXPORT long long hrt_sample_streams(void);
HRT_EXPORT const char *hrt_sample_text(long long stream);

/*===----------------------------------------------------------------------===*
 * Entry points for compiled code (hetero-lower-to-runtime). They take
 * 64-bit counts, report a failure with its message on stderr and abort the
 * job: generated code has no error path of its own.
 *===----------------------------------------------------------------------===*/

/* The communicator of the ranks that share all coordinates of a row-major
 * device grid of `ndims` dimensions (extents d0..d3) outside the axes in
 * `axes_mask` (bit i: axis i; 0: all axes). Cached; the grid must cover the
 * world. */
HRT_EXPORT hrt_comm hrt_mlir_group(long long ndims, long long d0, long long d1,
                                   long long d2, long long d3,
                                   long long axes_mask);
HRT_EXPORT hrt_comm hrt_mlir_world(void);
/* hetero.group_sync: this rank, worker (rank / replicas, rank % replicas)
 * of a stages x replicas grid that is the world, reports READY and returns
 * its group's size. `policy` 0 (allreduce) makes the group every replica of
 * the stage; 1 (dynamic) asks the coordinator, created with the options at
 * the first call (period, periodic semantics, lock, and `window`, T_max as a
 * fraction of the iteration time; negative: 1/N). hrt_finalize destroys it,
 * which tells the coordinator that this worker departed. */
HRT_EXPORT long long hrt_mlir_sync_ready(long long stages, long long replicas,
                                         int policy, long long period,
                                         int periodic, int lock, double window);
/* Averages `count` elements in place over the group of the last
 * hrt_mlir_sync_ready. */
HRT_EXPORT void hrt_mlir_sync_average(void *data, long long count, int dtype);
/* The statistics of this rank's dynamic sync groups; 0 when it has none. */
HRT_EXPORT int hrt_mlir_sync_stats(hrt_sync_stats *stats);
/* Ends the sync groups of hrt_mlir_sync_ready, collectively over the world:
 * this worker departs, so that no group waits for it any more, then the
 * coordinator stops. Call it after the last step and before any other
 * collective (hrt_finalize calls it otherwise): a replica that finished
 * its steps first must not keep another waiting in an enforced sync. */
HRT_EXPORT void hrt_mlir_sync_finish(void);
/* Where hetero.checkpoint's replicas live (Gemini's Algorithm 6.1). */
typedef enum {
  HRT_CKPT_GROUP = 0,
  HRT_CKPT_RING = 1,
  HRT_CKPT_MIXED = 2,
} hrt_ckpt_placement;
/* hetero.checkpoint: opens the checkpoint of the state before step `step`
 * (active when `step` is a multiple of `every`), `replicas` copies over the
 * `world` ranks in `placement` (an hrt_ckpt_placement); its `tensors`
 * tensors follow, in shard order, with hrt_mlir_ckpt_tensor. The last one
 * makes the local copy, after restoring a recovered shard of this step. */
HRT_EXPORT void hrt_mlir_ckpt_begin(long long step, long long replicas,
                                    long long world, int placement,
                                    long long every, long long tensors);
HRT_EXPORT void hrt_mlir_ckpt_tensor(void *data, long long bytes);
/* hetero.ckpt_chunk: sends bytes [offset, offset + bytes) of the tensor at
 * `data` to the `copy`-th peer of this rank's replica set, without
 * waiting. */
HRT_EXPORT void hrt_mlir_ckpt_chunk(const void *data, long long offset,
                                    long long bytes, long long copy);
/* hetero.ckpt_commit: completes the open checkpoint on every rank. */
HRT_EXPORT void hrt_mlir_ckpt_commit(void);
/* A stage program's task of micro-batch `microbatch` (-1: unknown) just
 * ended: `kind` is HRT_TIMELINE_FORWARD or HRT_TIMELINE_BACKWARD. */
HRT_EXPORT void hrt_mlir_task_mark(int kind, long long microbatch);
HRT_EXPORT long long hrt_mlir_rank(hrt_comm comm);
HRT_EXPORT long long hrt_mlir_size(hrt_comm comm);
HRT_EXPORT void hrt_mlir_all_reduce(hrt_comm comm, void *data, long long count,
                                    int dtype, int op);
/* hrt_mlir_all_reduce posted without waiting: the request completes with
 * hrt_mlir_wait, before anything reads `data`. On the MPI backend it runs on
 * the runtime's communication thread, which progresses it while the caller
 * computes (HETERO_RT_COMM_THREAD=0, or the link emulation: hrt_iall_reduce
 * on the caller's thread). */
HRT_EXPORT hrt_request hrt_mlir_all_reduce_start(hrt_comm comm, void *data,
                                                 long long count, int dtype,
                                                 int op);
HRT_EXPORT void hrt_mlir_wait(hrt_request request);
/* A compressed all-reduce (hrt_compressed_all_reduce) of float32 data in
 * place; `site` numbers the op in the program, whose error-feedback
 * residual and seed the runtime keeps. `placement` is the op's (0 cpu, 1
 * gpu): with 1, data in device memory is compressed by the device kernels
 * (libhetero_rt_cuda), data in host memory on the host. */
HRT_EXPORT void hrt_mlir_compressed_all_reduce(
    hrt_comm comm, void *data, long long count, int dtype, int op,
    int compressor, double ratio, long long levels, int scheme,
    int error_feedback, long long node_size, int placement, long long site);
/* hrt_mlir_compressed_all_reduce posted without waiting: compression and
 * communication run on the communication thread (as hrt_mlir_all_reduce_start
 * does), else complete in the call; hrt_mlir_wait completes the request. */
HRT_EXPORT hrt_request hrt_mlir_compressed_all_reduce_start(
    hrt_comm comm, void *data, long long count, int dtype, int op,
    int compressor, double ratio, long long levels, int scheme,
    int error_feedback, long long node_size, int placement, long long site);
/* Zen's sparse all-reduce (hrt_sparse_all_reduce) of float32 data in
 * place; `format` is 1 (COO) or 2 (hash bitmap). */
HRT_EXPORT void hrt_mlir_sparse_all_reduce(hrt_comm comm, void *data,
                                           long long count, int dtype, int op,
                                           int format);
HRT_EXPORT void hrt_mlir_all_gather(hrt_comm comm, const void *send, void *recv,
                                    long long count, int dtype);
HRT_EXPORT void hrt_mlir_reduce_scatter(hrt_comm comm, const void *send,
                                        void *recv, long long count, int dtype,
                                        int op);
HRT_EXPORT void hrt_mlir_broadcast(hrt_comm comm, void *data, long long count,
                                   int dtype, long long root);
HRT_EXPORT void hrt_mlir_reduce(hrt_comm comm, void *data, long long count,
                                int dtype, int op, long long root);
HRT_EXPORT void hrt_mlir_all_to_all(hrt_comm comm, const void *send, void *recv,
                                    long long count, int dtype);
HRT_EXPORT void hrt_mlir_send(hrt_comm comm, const void *data, long long count,
                              int dtype, long long peer, long long tag);
HRT_EXPORT void hrt_mlir_recv(hrt_comm comm, void *data, long long count,
                              int dtype, long long peer, long long tag);
/* hetero.prune_plan: writes the kept columns (ascending) of the layer whose
 * key hashes to `layer` (hetero::hashLayerKey), of `columns` columns, to
 * `kept` (room for `columns`) and returns their count. */
HRT_EXPORT long long hrt_mlir_prune_plan(unsigned long long layer,
                                         long long columns, long long *kept);
/* hetero.observe_weight: the forward weight (`rows` x `columns`, row-major
 * f32, a row per contraction column) of the layer whose key hashes to
 * `layer`, read for ZERO-Pri's statistics (hrt_resize_configure_priority;
 * otherwise ignored). */
HRT_EXPORT void hrt_mlir_observe_weight(unsigned long long layer,
                                        long long rows, long long columns,
                                        const float *data);
/* hetero.previous_product: writes to `data` the `bytes` of the (n+1)-th
 * value of the (layer, product) pair (hetero::MatmulProduct: 1 grad_input,
 * 2 grad_weight) kept in the previous iteration, where this iteration has
 * kept n so far; zeros when there is none or its size differs. Iterations
 * are delimited by hrt_resize_begin_iteration. */
HRT_EXPORT void hrt_mlir_previous_product(unsigned long long layer,
                                          long long product, long long bytes,
                                          void *data);
/* hetero.keep_product: copies `bytes` of `data`, this iteration's value of
 * the (layer, product) pair, for the next iteration's questions (same
 * imputation). Kept only while this rank may prune: a fixed ratio that
 * names it, or the online planner. */
HRT_EXPORT void hrt_mlir_keep_product(unsigned long long layer,
                                      long long product, long long bytes,
                                      const void *data);
/* hetero.migration_plan: writes the columns (ascending positions among the
 * `columns` of the layer's shard on group rank `source`) that this rank
 * computes for `source` this iteration to `received` (room for `columns`)
 * and returns their count; -1 when `source` migrates none of the layer's
 * columns (the same answer on every rank of the group). */
HRT_EXPORT long long hrt_mlir_migration_plan(unsigned long long layer,
                                             long long columns,
                                             long long source,
                                             long long *received);
/* hetero.migrated_columns: writes every column (position among the
 * `columns` of the layer's shard on group rank `source`) that `source`
 * migrates this iteration to `migrated` (room for `columns`; the same on
 * every rank of the group) and returns their count, 0 when none; `*first`
 * is where this rank's block of them (hrt_mlir_migration_plan's received)
 * starts, 0 when it receives none. */
HRT_EXPORT long long hrt_mlir_migrated_columns(unsigned long long layer,
                                               long long columns,
                                               long long source,
                                               long long *first,
                                               long long *migrated);
/* hetero.gemm_mark's events. */
typedef enum {
  HRT_GEMM_BEGIN = 0,
  HRT_GEMM_END = 1,
  HRT_GEMM_BEGIN_MIGRATED = 2,
  HRT_GEMM_END_MIGRATED = 3,
} hrt_gemm_event;
/* hetero.gemm_mark begin | end (an hrt_gemm_event): brackets a resized
 * layer's GEMM; begin_migrated | end_migrated: a GEMM of another rank's
 * migrated columns. The time between counts as this rank's GEMM time (2-3:
 * apart from its own work); a rank named in
 * HETERO_RT_SLOW_GEMM=<rank>:<slowdown>[,...] sleeps (slowdown - 1) times
 * each GEMM's time there (sleeps under a millisecond add up first). */
HRT_EXPORT void hrt_mlir_gemm_mark(int event);
/* hrt_data_batch, hrt_sample_context and hrt_sample_next. */
HRT_EXPORT void hrt_mlir_corpus_batch(int *input, int *target,
                                      long long sequences, long long tokens,
                                      long long step, long long replica,
                                      long long microbatch, long long vocab,
                                      long long replicas);
HRT_EXPORT void hrt_mlir_sample_context(int *context, long long streams,
                                        long long tokens, long long vocab);
HRT_EXPORT float hrt_mlir_sample_next(const float *logits, long long rows,
                                      long long vocab);

#ifdef __cplusplus
}
#endif

#endif /* HETERO_RT_HRT_H */
