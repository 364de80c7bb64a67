//===- CheckpointAgent.cpp - the checkpoint agent and its clients ---------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "CheckpointAgent.h"

#include "hetero-rt/hrt.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hetero::rt::agent {
namespace {

constexpr size_t kMaxSegmentBytes = size_t(1) << 40;

std::string systemError(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

/// The absolute form of `path`, without resolving links (the socket need
/// not exist yet).
std::string absolutePath(const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  char directory[4096];
  if (!getcwd(directory, sizeof(directory)))
    return path;
  return std::string(directory) + "/" + path;
}

/// The address an agent listens on for `path`: the socket file itself
/// when the path fits in sun_path (107 characters), otherwise a name in
/// Linux's abstract namespace made from a hash of the absolute path, so
/// that a run directory of any depth works. `length` is the address's
/// length for bind and connect. Returns false when the abstract name is
/// used (there is no file to unlink).
bool socketAddress(const std::string &path, sockaddr_un &address,
                   socklen_t &length, std::string &error) {
  std::memset(&address, 0, sizeof(address));
  address.sun_family = AF_UNIX;
  constexpr size_t kPathOffset = offsetof(sockaddr_un, sun_path);
  if (path.empty()) {
    error = "the agent socket path is empty";
    return false;
  }
  if (path.size() < sizeof(address.sun_path)) {
    std::memcpy(address.sun_path, path.c_str(), path.size());
    length = socklen_t(kPathOffset + path.size() + 1);
    return true;
  }
  uint64_t hash = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : absolutePath(path))
    hash = (hash ^ c) * 1099511628211ull;
  char name[64];
  int size = std::snprintf(name, sizeof(name), "hetero-agent-%u-%016llx",
                           unsigned(getuid()), (unsigned long long)hash);
  // A leading NUL byte selects the abstract namespace.
  std::memcpy(address.sun_path + 1, name, size_t(size));
  length = socklen_t(kPathOffset + 1 + size_t(size));
  return true;
}

bool isAbstract(const sockaddr_un &address) {
  return address.sun_path[0] == '\0';
}

/// Whether the peer on `socket` runs as this process's user: an abstract
/// socket has no file permissions, so the agent checks its clients.
bool sameUser(int socket) {
  ucred credentials{};
  socklen_t size = sizeof(credentials);
  return getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) ==
             0 &&
         credentials.uid == getuid();
}

/// Sends `text`, with `fd` attached when it is >= 0.
bool sendReply(int socket, const std::string &text, int fd) {
  msghdr message{};
  iovec vector{const_cast<char *>(text.data()), text.size()};
  message.msg_iov = &vector;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd >= 0) {
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  }
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = sendmsg(socket, &message, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    sent += size_t(n);
    // The descriptor travels with the first bytes only.
    message.msg_control = nullptr;
    message.msg_controllen = 0;
    vector.iov_base = const_cast<char *>(text.data()) + sent;
    vector.iov_len = text.size() - sent;
  }
  return true;
}

struct Segment {
  int fd = -1;
  size_t bytes = 0;
};

/// One request line of a client; returns false when the agent should exit.
bool handle(int client, const std::string &line,
            std::map<std::string, Segment> &segments) {
  std::istringstream in(line);
  std::string command, name;
  in >> command;
  if (command == "OPEN") {
    unsigned long long bytes = 0;
    if (!(in >> name >> bytes) || name.size() > 200 || bytes == 0 ||
        bytes > kMaxSegmentBytes) {
      sendReply(client, "ERR OPEN takes a name and 1 to 2^40 bytes\n", -1);
      return true;
    }
    Segment &segment = segments[name];
    bool created = false;
    if (segment.fd < 0 || segment.bytes != bytes) {
      if (segment.fd >= 0)
        close(segment.fd);
      segment.fd = memfd_create(name.c_str(), MFD_CLOEXEC);
      if (segment.fd < 0 || ftruncate(segment.fd, off_t(bytes)) != 0) {
        std::string why = systemError("cannot create the segment");
        if (segment.fd >= 0)
          close(segment.fd);
        segments.erase(name);
        sendReply(client, "ERR " + why + "\n", -1);
        return true;
      }
      segment.bytes = bytes;
      created = true;
    }
    sendReply(client,
              "OK " + std::to_string(bytes) + " " + (created ? "1" : "0") +
                  "\n",
              segment.fd);
    return true;
  }
  if (command == "LIST") {
    std::string reply = "OK " + std::to_string(segments.size()) + "\n";
    for (auto &[segmentName, segment] : segments)
      reply += segmentName + " " + std::to_string(segment.bytes) + "\n";
    sendReply(client, reply, -1);
    return true;
  }
  if (command == "DROP") {
    in >> name;
    auto found = segments.find(name);
    if (found != segments.end()) {
      close(found->second.fd);
      segments.erase(found);
    }
    sendReply(client, "OK\n", -1);
    return true;
  }
  if (command == "QUIT") {
    sendReply(client, "OK\n", -1);
    return false;
  }
  sendReply(client, "ERR unknown request '" + command + "'\n", -1);
  return true;
}

} // namespace

bool serve(const std::string &socketPath, std::string &error) {
  std::string probe;
  if (Client::connect(socketPath, probe)) {
    error = "an agent already answers on " + socketPath;
    return false;
  }
  sockaddr_un address;
  socklen_t length = 0;
  if (!socketAddress(socketPath, address, length, error))
    return false;
  bool abstract = isAbstract(address);
  std::signal(SIGPIPE, SIG_IGN);
  if (!abstract)
    unlink(socketPath.c_str());
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0 ||
      bind(listener, reinterpret_cast<sockaddr *>(&address), length) != 0 ||
      listen(listener, 64) != 0) {
    error = systemError("cannot listen on " + socketPath);
    return false;
  }
  std::map<std::string, Segment> segments;
  std::vector<pollfd> watched = {{listener, POLLIN, 0}};
  std::map<int, std::string> pending; // per client, its unfinished line
  bool running = true;
  while (running) {
    if (poll(watched.data(), watched.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      error = systemError("poll");
      break;
    }
    for (size_t i = watched.size(); i-- > 0;) {
      if (!watched[i].revents)
        continue;
      int fd = watched[i].fd;
      if (fd == listener) {
        int client = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (client >= 0 && !sameUser(client))
          close(client);
        else if (client >= 0)
          watched.push_back({client, POLLIN, 0});
        continue;
      }
      char buffer[4096];
      ssize_t n = read(fd, buffer, sizeof(buffer));
      if (n <= 0) {
        close(fd);
        pending.erase(fd);
        watched.erase(watched.begin() + long(i));
        continue;
      }
      std::string &text = pending[fd];
      text.append(buffer, size_t(n));
      size_t end;
      while (running && (end = text.find('\n')) != std::string::npos) {
        std::string line = text.substr(0, end);
        text.erase(0, end + 1);
        running = handle(fd, line, segments);
      }
    }
  }
  for (pollfd &entry : watched)
    close(entry.fd);
  if (!abstract)
    unlink(socketPath.c_str());
  return !running;
}

bool spawn(const std::string &agentPath, const std::string &socketPath,
           std::string &error) {
  // Nothing allocates between fork and exec.
  std::string logPath = socketPath + ".log";
  pid_t child = fork();
  if (child < 0) {
    error = systemError("cannot start the checkpoint agent");
    return false;
  }
  if (child == 0) {
    // A new session, then a grandchild that init adopts: the job's end
    // (mpirun's signals to its process group) does not reach the agent.
    setsid();
    if (fork() != 0)
      _exit(0);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    // Its complaints go to a log beside its socket, not to the job's
    // output, which the job's end closes.
    int log = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(log >= 0 ? log : null, 2);
    // The launcher's descriptors (MPI's sockets) stay with the job.
    for (int fd = 3; fd < 65536; ++fd)
      if (fd != 2)
        close(fd);
    execl(agentPath.c_str(), agentPath.c_str(), "--socket", socketPath.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  // The agent answers once it listens.
  for (int attempt = 0; attempt < 200; ++attempt) {
    std::string ignored;
    if (Client::connect(socketPath, ignored))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  error = "the checkpoint agent '" + agentPath + "' did not answer on " +
          socketPath + " within 5 s";
  // Its own reason, when it gave one, is the last line of its log.
  std::ifstream log(logPath);
  std::string line, last;
  while (std::getline(log, line))
    if (!line.empty())
      last = line;
  if (!last.empty())
    error += " (its log " + logPath + " says: " + last + ")";
  return false;
}

Client::~Client() { close(socket); }

std::unique_ptr<Client> Client::connect(const std::string &socketPath,
                                        std::string &error) {
  sockaddr_un address;
  socklen_t length = 0;
  if (!socketAddress(socketPath, address, length, error))
    return nullptr;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = systemError("socket");
    return nullptr;
  }
  if (::connect(fd, reinterpret_cast<sockaddr *>(&address), length) != 0) {
    error = systemError("no checkpoint agent answers on " + socketPath);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<Client>(new Client(fd));
}

bool Client::readLine(std::string &line, int *fd, std::string &error) {
  while (true) {
    size_t end = buffered.find('\n');
    if (end != std::string::npos) {
      line = buffered.substr(0, end);
      buffered.erase(0, end + 1);
      return true;
    }
    char data[4096];
    msghdr message{};
    iovec vector{data, sizeof(data)};
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n == 0 ? "the checkpoint agent closed the connection"
                     : systemError("reading from the checkpoint agent");
      return false;
    }
    for (cmsghdr *header = CMSG_FIRSTHDR(&message); header;
         header = CMSG_NXTHDR(&message, header))
      if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
          fd)
        std::memcpy(fd, CMSG_DATA(header), sizeof(int));
    buffered.append(data, size_t(n));
  }
}

bool Client::exchange(const std::string &request, std::string &reply, int *fd,
                      std::string &error) {
  std::string line = request + "\n";
  if (!sendReply(socket, line, -1)) {
    error = systemError("writing to the checkpoint agent");
    return false;
  }
  if (!readLine(reply, fd, error))
    return false;
  if (reply.rfind("OK", 0) == 0)
    return true;
  error = "the checkpoint agent refused '" + request + "': " + reply;
  return false;
}

bool Client::open(const std::string &name, size_t bytes, int &fd, bool &created,
                  std::string &error) {
  std::string reply;
  fd = -1;
  if (!exchange("OPEN " + name + " " + std::to_string(bytes), reply, &fd,
                error))
    return false;
  unsigned long long size = 0;
  int isNew = 0;
  if (std::sscanf(reply.c_str(), "OK %llu %d", &size, &isNew) != 2 ||
      size != bytes || fd < 0) {
    error = "the checkpoint agent answered '" + reply + "' without a segment";
    if (fd >= 0)
      close(fd);
    return false;
  }
  created = isNew != 0;
  return true;
}

bool Client::list(std::vector<std::pair<std::string, size_t>> &segments,
                  std::string &error) {
  std::string reply;
  if (!exchange("LIST", reply, nullptr, error))
    return false;
  size_t count = 0;
  if (std::sscanf(reply.c_str(), "OK %zu", &count) != 1) {
    error = "the checkpoint agent answered '" + reply + "' to LIST";
    return false;
  }
  segments.clear();
  for (size_t i = 0; i < count; ++i) {
    std::string line;
    if (!readLine(line, nullptr, error))
      return false;
    size_t space = line.rfind(' ');
    if (space == std::string::npos) {
      error = "the checkpoint agent listed '" + line + "'";
      return false;
    }
    segments.emplace_back(line.substr(0, space),
                          std::stoull(line.substr(space + 1)));
  }
  return true;
}

bool Client::drop(const std::string &name, std::string &error) {
  std::string reply;
  return exchange("DROP " + name, reply, nullptr, error);
}

bool Client::quit(std::string &error) {
  std::string reply;
  return exchange("QUIT", reply, nullptr, error);
}

} // namespace hetero::rt::agent

extern "C" int hrt_ckpt_agent_main(const char *socketPath) {
  std::string error;
  if (!socketPath || !hetero::rt::agent::serve(socketPath, error)) {
    std::fprintf(stderr, "hetero-ckpt-agent: %s\n",
                 socketPath ? error.c_str() : "no socket path");
    return 1;
  }
  return 0;
}
