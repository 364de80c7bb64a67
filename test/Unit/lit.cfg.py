# -*- Python -*-
# Runs the gtest unit-test binaries of build/unittests through lit.

import os

import lit.formats

config.name = "HETERO-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.hetero_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(config.llvm_build_mode, "Tests")
