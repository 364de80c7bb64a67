// Every hetero pass and pipeline accepts a module with nothing in it,
// including those that create hetero attributes or ops (the dialect is
// loaded for them even though the input does not use it).
// RUN: hetero-opt %s --hetero-summary=output=/dev/null | FileCheck %s
// RUN: hetero-opt %s --hetero-prunable-to-linalg | FileCheck %s
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-size=2 | FileCheck %s
// RUN: hetero-opt %s --hetero-kfkb-schedule=group-sizes=1,2 | FileCheck %s
// RUN: hetero-opt %s --hetero-fuse-gradients | FileCheck %s
// RUN: hetero-opt %s --hetero-select-compression | FileCheck %s
// RUN: hetero-opt %s --hetero-print-schedule | FileCheck %s
// RUN: hetero-opt %s --hetero-verify-schedule | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-pipeline | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-runtime | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-cpu | FileCheck %s
// RUN: hetero-opt %s --hetero-lower-to-gpu=format=isa | FileCheck %s
// RUN: hetero-opt %s --hetero-partition-stages=stages=4 | FileCheck %s
// RUN: hetero-opt %s --hetero-rebatch=sizes=8 | FileCheck %s

// CHECK: module {
// CHECK-NEXT: }
module {}
