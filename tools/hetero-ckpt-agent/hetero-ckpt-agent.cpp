//===- hetero-ckpt-agent.cpp - the checkpoint agent of a machine ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
//   hetero-ckpt-agent --socket PATH
//
// Holds the CPU memory of a machine's in-memory checkpoints (Gemini) so
// that they outlive the training processes, serving the ranks on a Unix
// socket until one tells it to quit (runtime/CheckpointAgent.h).
// `hetero-run --checkpoint` starts one per rank when none answers.
//
//===----------------------------------------------------------------------===//

#include "hetero-rt/hrt.h"

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 3 || std::strcmp(argv[1], "--socket") != 0) {
    std::fprintf(stderr, "usage: hetero-ckpt-agent --socket PATH\n");
    return 1;
  }
  return hrt_ckpt_agent_main(argv[2]);
}
