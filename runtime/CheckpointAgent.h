//===- CheckpointAgent.h - the checkpoint agent and its clients -*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The checkpoint agent of one machine holds the CPU memory of its
// in-memory checkpoints, so that they outlive the training processes: a
// rank that is killed and relaunched maps the same memory again, and only
// the loss of the agent (the machine) loses it. The agent is a separate,
// detached process (hetero-ckpt-agent) that serves a Unix socket. Ranks ask
// it for a named memory segment of a size and receive its file descriptor
// (a memfd, passed with SCM_RIGHTS), which they map shared.
//
// Requests are single lines; every reply starts with "OK" or "ERR <why>":
//   OPEN <name> <bytes>  the segment, created zero-filled when it is new or
//                        its size differs; "OK <bytes> <1 if created>" and
//                        the descriptor
//   LIST                 "OK <n>", then n lines "<name> <bytes>"
//   DROP <name>          frees the segment
//   QUIT                 the agent exits
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUNTIME_CHECKPOINTAGENT_H
#define HETERO_RUNTIME_CHECKPOINTAGENT_H

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hetero::rt::agent {

/// Serves the protocol on `socketPath` until QUIT. Returns false with
/// `error` when it cannot listen there (another agent answers on it, say).
bool serve(const std::string &socketPath, std::string &error);

/// Starts `agentPath --socket <socketPath>` detached from the caller's
/// session (it survives the job) and waits until it answers.
bool spawn(const std::string &agentPath, const std::string &socketPath,
           std::string &error);

/// A connection to an agent.
class Client {
public:
  ~Client();
  /// Null, with `error`, when no agent answers on `socketPath`.
  static std::unique_ptr<Client> connect(const std::string &socketPath,
                                         std::string &error);
  /// The descriptor of segment `name` of `bytes` bytes; the caller owns it.
  bool open(const std::string &name, size_t bytes, int &fd, bool &created,
            std::string &error);
  bool list(std::vector<std::pair<std::string, size_t>> &segments,
            std::string &error);
  bool drop(const std::string &name, std::string &error);
  bool quit(std::string &error);

private:
  explicit Client(int socket) : socket(socket) {}
  /// Sends `request` and reads the reply line (and a descriptor if one
  /// comes with it).
  bool exchange(const std::string &request, std::string &reply, int *fd,
                std::string &error);
  bool readLine(std::string &line, int *fd, std::string &error);
  int socket;
  std::string buffered;
};

} // namespace hetero::rt::agent

#endif // HETERO_RUNTIME_CHECKPOINTAGENT_H
