//===- CommThread.cpp - the runtime's communication thread ----------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// Compiled code posts a gradient's all-reduce as soon as the gradient is
// complete and waits for it before its first use. MPI progresses a
// non-blocking collective only inside MPI calls, so a collective posted
// before a stretch of computation would wait for the next call; and a
// compressed all-reduce compresses on the host before it communicates. One
// thread per process runs these collectives in the order they were posted
// (every rank posts the collectives of a communicator in the same order, so
// the thread's order matches on every rank), compressing and communicating
// while the compiled code computes: the role of the background thread of
// Horovod and of the communication stream of PyTorch DDP.
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace hetero::rt {
namespace {

thread_local bool isCommunicationThread = false;

/// A collective handed to the thread, and its result once it has run.
struct Job {
  std::function<hrt_status()> work;
  size_t bytes = 0;
  bool done = false;
  hrt_status status = HRT_SUCCESS;
  std::string error;
};

class CommunicationThread {
public:
  ~CommunicationThread() { stop(); }

  void post(std::shared_ptr<Job> job) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(job));
      ++posted;
      if (!thread.joinable())
        thread = std::thread([this] { loop(); });
    }
    wake.notify_all();
  }

  /// Blocks until `job` has run.
  void waitFor(const Job &job) {
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, [&] { return job.done; });
  }

  /// Blocks until every job posted so far has run.
  void drain() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t target = posted;
    finished.wait(lock, [&] { return completed >= target; });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
    stopping = false;
  }

private:
  void loop() {
    isCommunicationThread = true;
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return; // stopping, and nothing left to run
      std::shared_ptr<Job> job = queue.front();
      queue.pop_front();
      lock.unlock();
      double start = hrt_wtime();
      hrt_status status = job->work();
      recordBackground(HRT_TIMELINE_BACKGROUND, start, hrt_wtime(), job->bytes);
      std::string error = status == HRT_SUCCESS ? "" : hrt_last_error();
      lock.lock();
      job->status = status;
      job->error = std::move(error);
      job->done = true;
      job->work = nullptr; // release what it captured
      ++completed;
      finished.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable wake, finished;
  std::deque<std::shared_ptr<Job>> queue;
  uint64_t posted = 0, completed = 0;
  bool stopping = false;
  std::thread thread;
};

CommunicationThread &communicationThread() {
  static CommunicationThread *instance = new CommunicationThread;
  return *instance;
}

/// The request of a job: complete once the thread has run it.
class ThreadedOperation : public PendingOperation {
public:
  explicit ThreadedOperation(std::shared_ptr<Job> job) : job(std::move(job)) {}

  hrt_status test(bool &done) override {
    // The thread runs a collective to its end, or to the runtime's timeout
    // and an error: waiting for it cannot hang longer than the collective.
    communicationThread().waitFor(*job);
    done = true;
    if (job->status == HRT_SUCCESS)
      return HRT_SUCCESS;
    return failWith(job->status, job->error);
  }
  void abandon() override {}

private:
  std::shared_ptr<Job> job;
};

} // namespace

bool onCommunicationThread() { return isCommunicationThread; }

bool communicationThreadEnabled() {
  static const bool disabled = [] {
    const char *text = std::getenv("HETERO_RT_COMM_THREAD");
    return text && std::strcmp(text, "0") == 0;
  }();
  return !disabled && mpiBackendActive() && mpiThreadMultiple() &&
         !linkModelActive();
}

std::unique_ptr<PendingOperation>
startOnCommunicationThread(std::function<hrt_status()> work,
                           const CallSite &site) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  job->bytes = site.bytes;
  communicationThread().post(job);
  auto pending = std::make_unique<ThreadedOperation>(std::move(job));
  pending->site = site;
  return pending;
}

void drainCommunicationThread() { communicationThread().drain(); }

void stopCommunicationThread() { communicationThread().stop(); }

} // namespace hetero::rt
