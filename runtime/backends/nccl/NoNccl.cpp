//===- NoNccl.cpp - the NCCL backend of a build without NCCL --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "../../Runtime.h"

std::unique_ptr<hetero::rt::Backend> hetero::rt::createNcclBackend() {
  return nullptr;
}
