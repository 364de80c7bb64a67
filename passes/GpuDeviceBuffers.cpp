//===- GpuDeviceBuffers.cpp - a step's data in device memory --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// After bufferization a step's buffers are host memory: temporaries are
// memref.alloc (malloc), parameters and optimizer state memref.global. For
// the GPU, every buffer a kernel works on lives in device memory for the
// whole step, and the host reaches device data only through explicit
// copies.
//
// Placement is decided per buffer, across functions: buffers that alias
// (views, casts, a call's argument and the callee's parameter, a callee's
// result and the call's, every get_global of one global) form one class,
// and a class is device memory when a structured op (a kernel or a cuBLAS
// call later), a copy or a load or store inside a parallel loop touches a
// member. Then:
//
// - an allocation of a device class becomes a gpu.alloc (through the
//   runtime's stream-ordered caching pool), its deallocations gpu.dealloc;
// - a global of a device class gets a device copy made by the runtime on
//   first use (hrt_cuda_mirror: parameters, optimizer state, constants),
//   which every use reads and writes; the host copy is refreshed only when
//   the host asks (hrt_cuda_mirrors_to_host, for --save);
// - a host load or store of device data becomes a one-element copy
//   (hrt_cuda_copy) through a host scratch slot;
// - a runtime call (an external function) given a device buffer's address
//   gets a pinned host copy of the buffer instead (hrt_cuda_stage_in), and
//   the buffer gets the host copy back after the call, or after the wait
//   of the request it returned (hrt_cuda_stage_out). A checkpoint's
//   calls get the global's host buffer, which the runtime refreshes from
//   the device copy as the checkpoint opens (hrt_cuda_mirror_copy). With
//   `device-collectives`, the collectives and point-to-point calls take
//   device addresses (the NCCL backend) and are not staged; nor is a
//   compressed all-reduce placed on the GPU, which the device kernels
//   compress where the gradient is;
// - memref.copy between device buffers becomes linalg.copy, a kernel;
//   between host and device memory, a gpu.memcpy.
//
// Buffers only the host touches (the deallocation's ownership lists, a
// scalar the host all-reduces) stay host memory.
//
//===----------------------------------------------------------------------===//

#include "GpuRuntime.h"
#include "hetero/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringSet.h"

namespace hetero {
#define GEN_PASS_DEF_HETEROGPUDEVICEBUFFERS
#include "hetero/Passes/Passes.h.inc"
} // namespace hetero

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMirror = "hrt_cuda_mirror";
constexpr llvm::StringLiteral kCopy = "hrt_cuda_copy";
constexpr llvm::StringLiteral kStageIn = "hrt_cuda_stage_in";
constexpr llvm::StringLiteral kStageOut = "hrt_cuda_stage_out";
constexpr llvm::StringLiteral kWait = "hrt_mlir_wait";

/// The runtime calls that take device buffers as they are: the
/// collectives when they run on the device (`deviceCollectives`, the NCCL
/// backend), and a compressed all-reduce placed on the GPU (placement
/// operand 1, the one before the site), whose device kernels compress in
/// device memory on either backend.
bool takesDeviceAddresses(func::CallOp call, bool deviceCollectives) {
  StringRef callee = call.getCallee();
  if (callee == "hrt_mlir_compressed_all_reduce" ||
      callee == "hrt_mlir_compressed_all_reduce_start") {
    unsigned operands = call.getNumOperands();
    return operands >= 2 &&
           matchPattern(call.getOperand(operands - 2), m_One());
  }
  return deviceCollectives && hetero::isDeviceCollective(callee);
}

/// What a runtime call does with the buffer of its operand `index`: reads
/// it (the host copy need not go back), writes it (the device data need not
/// come over), or either (the default).
struct Direction {
  bool in = true, out = true;
};
Direction directionOf(StringRef callee, unsigned index) {
  // Pointer operands: hrt_mlir_send(comm, data, ...),
  // hrt_mlir_recv(comm, data, ...), hrt_mlir_all_gather(comm, send, recv,
  // ...) and its kin, hrt_mlir_corpus_batch(input, target, ...),
  // hrt_mlir_sample_next(logits, ...), hrt_mlir_sample_context(context,
  // ...).
  bool sendRecv = callee == "hrt_mlir_all_gather" ||
                  callee == "hrt_mlir_reduce_scatter" ||
                  callee == "hrt_mlir_all_to_all";
  if (callee == "hrt_mlir_send" || (sendRecv && index == 1) ||
      callee == "hrt_mlir_sample_next")
    return {true, false};
  if (callee == "hrt_mlir_recv" || (sendRecv && index == 2) ||
      callee == "hrt_mlir_corpus_batch" || callee == "hrt_mlir_sample_context")
    return {false, true};
  return {};
}

/// Runs `build` (which creates one async gpu op after the token it is
/// given, returning the op's token) on a fresh stream and waits for it.
template <typename Build>
void awaited(OpBuilder &b, Location loc, Build build) {
  Type token = gpu::AsyncTokenType::get(b.getContext());
  Value start =
      gpu::WaitOp::create(b, loc, token, ValueRange{}).getAsyncToken();
  Value done = build(token, start);
  gpu::WaitOp::create(b, loc, Type(), ValueRange{done});
}

bool isMemRef(Value value) { return isa<MemRefType>(value.getType()); }

/// Whether `op` runs on the device once the pipeline maps loops to
/// kernels: inside a structured op, a parallel loop or a gpu.launch.
bool inKernel(Operation *op) {
  return op->getParentOfType<linalg::LinalgOp>() ||
         op->getParentOfType<scf::ParallelOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

/// The aligned-pointer extraction that `value` (an operand of a runtime
/// call: an address, as an integer or a pointer) is computed from, and
/// the ops between them, in order.
memref::ExtractAlignedPointerAsIndexOp
addressSource(Value value, SmallVectorImpl<Operation *> &chain) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def))
    return extract;
  Value next;
  if (isa<LLVM::IntToPtrOp, arith::IndexCastOp, arith::IndexCastUIOp>(def))
    next = def->getOperand(0);
  else if (auto gep = dyn_cast<LLVM::GEPOp>(def))
    next = gep.getBase();
  else if (isa<arith::AddIOp>(def))
    for (Value operand : def->getOperands())
      if (SmallVector<Operation *> inner; addressSource(operand, inner)) {
        next = operand;
        break;
      }
  if (!next)
    return {};
  auto source = addressSource(next, chain);
  if (source)
    chain.push_back(def);
  return source;
}

/// The classes of buffers that alias, and which of them are device memory.
class Placement {
public:
  /// With `deviceCollectives`, the buffers the collectives and
  /// point-to-point calls move are device memory too.
  Placement(ModuleOp module, bool deviceCollectives)
      : module(module), deviceCollectives(deviceCollectives) {}

  /// Visits the host code: kernels already in gpu.modules are the
  /// device's own.
  void analyze() {
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      visit(op);
      return WalkResult::advance();
    });
  }

  Value leader(Value value) { return classes.getOrInsertLeaderValue(value); }
  /// `fresh` (a value a rewrite made) stands for `existing`.
  void alias(Value fresh, Value existing) {
    // The existing class keeps its leader.
    classes.unionSets(existing, fresh);
  }
  bool onDevice(Value value) {
    return isMemRef(value) && device.contains(leader(value));
  }
  /// Marks the device classes: call after analyze().
  void resolve() {
    for (Value value : deviceUses)
      device.insert(leader(value));
    // A copy between host and device memory is a plain transfer when both
    // sides are contiguous; otherwise it is a kernel, on device memory.
    bool changed = true;
    while (changed) {
      changed = false;
      for (memref::CopyOp copy : copies) {
        Value source = copy.getSource(), target = copy.getTarget();
        if (onDevice(source) != onDevice(target) &&
            !(contiguous(source) && contiguous(target))) {
          device.insert(leader(source));
          device.insert(leader(target));
          changed = true;
        }
      }
    }
  }

  /// Whether `memref` is one contiguous run of memory from its aligned
  /// pointer on.
  static bool contiguous(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    return type.getLayout().isIdentity();
  }

private:
  void join(Value a, Value b) {
    if (isMemRef(a) && isMemRef(b))
      classes.unionSets(a, b);
  }

  /// The representative of result `index` of `function`.
  void joinResult(func::FuncOp function, unsigned index, Value value) {
    auto [it, inserted] = results.try_emplace({function, index}, value);
    if (!inserted)
      join(it->second, value);
  }

  void visit(Operation *op) {
    if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      auto [it, inserted] =
          globals.try_emplace(global.getNameAttr(), global.getResult());
      if (!inserted)
        join(it->second, global.getResult());
      classes.insert(global.getResult());
      return;
    }
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
      join(metadata.getBaseBuffer(), metadata.getSource());
      return;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      for (Value result : op->getResults())
        join(result, view.getViewSource());
      return;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
      if (callee && callee.isDeclaration() &&
          takesDeviceAddresses(call, deviceCollectives))
        for (Value operand : call.getOperands()) {
          SmallVector<Operation *> chain;
          if (auto extract = addressSource(operand, chain))
            deviceUses.push_back(extract.getSource());
        }
      if (!callee || callee.isDeclaration())
        return;
      for (auto [operand, argument] :
           llvm::zip(call.getOperands(), callee.getArguments()))
        join(operand, argument);
      for (auto [index, result] : llvm::enumerate(call.getResults()))
        if (isMemRef(result))
          joinResult(callee, index, result);
      return;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      auto function = ret->getParentOfType<func::FuncOp>();
      for (auto [index, operand] : llvm::enumerate(ret.getOperands()))
        if (isMemRef(operand))
          joinResult(function, index, operand);
      return;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      for (auto [init, argument, result] :
           llvm::zip(forOp.getInitArgs(), forOp.getRegionIterArgs(),
                     forOp.getResults())) {
        join(init, argument);
        join(init, result);
      }
    }
    // Yielded buffers are the results of the op that holds them.
    if (op->hasTrait<OpTrait::IsTerminator>() && op->getParentOp() &&
        op->getParentOp()->getNumResults() == op->getNumOperands() &&
        !isa<func::FuncOp>(op->getParentOp())) {
      for (auto [operand, result] :
           llvm::zip(op->getOperands(), op->getParentOp()->getResults()))
        join(operand, result);
    }
    // Other ops that make a buffer from buffers (arith.select) alias them.
    if (!isa<memref::AllocOp, memref::AllocaOp>(op) && op->getNumRegions() == 0)
      for (Value result : op->getResults())
        for (Value operand : op->getOperands())
          join(result, operand);
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      copies.push_back(copy);
    // Device uses.
    if (isa<linalg::LinalgOp>(op) ||
        (isa<memref::LoadOp, memref::StoreOp>(op) && inKernel(op)) ||
        isa_and_nonnull<gpu::GPUDialect>(op->getDialect()))
      for (Value operand : op->getOperands())
        if (isMemRef(operand))
          deviceUses.push_back(operand);
    for (Value result : op->getResults())
      if (isMemRef(result))
        classes.insert(result);
  }

  ModuleOp module;
  bool deviceCollectives;
  llvm::EquivalenceClasses<Value> classes;
  llvm::DenseSet<Value> device;
  SmallVector<Value> deviceUses;
  SmallVector<memref::CopyOp> copies;
  llvm::DenseMap<Attribute, Value> globals;
  llvm::DenseMap<std::pair<Operation *, unsigned>, Value> results;
};

/// Index arithmetic, folded where the operands are constants.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value value(OpFoldResult entry) {
    return getValueOrCreateConstantIndexOp(b, loc, entry);
  }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  }
  Value toI64(Value index) {
    return b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), index);
  }
  Value toPointer(Value index) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), toI64(index));
  }
};

struct GpuDeviceBuffersPass
    : hetero::impl::HeteroGpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Placement placement(module, deviceCollectives);
    placement.analyze();
    placement.resolve();
    if (failed(declareRuntime()))
      return signalPassFailure();

    hoistGlobals(module);
    SmallVector<Operation *> ops;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              memref::GetGlobalOp, memref::CopyOp, memref::LoadOp,
              memref::StoreOp, func::CallOp>(op))
        ops.push_back(op);
      return WalkResult::advance();
    });
    for (Operation *op : ops) {
      if (failed(place(op, placement)))
        return signalPassFailure();
    }
  }

private:
  /// Moves each function's memref.get_global ops (which read nothing) to
  /// the start of its body, in their order, so that the device copies are
  /// looked up before the function's work and not between its kernels,
  /// which may then be fused (hetero-gpu-row-kernels,
  /// hetero-gpu-horizontal-fusion).
  static void hoistGlobals(ModuleOp module) {
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      Block &entry = function.getBody().front();
      SmallVector<memref::GetGlobalOp> globals;
      function.walk([&](memref::GetGlobalOp global) {
        if (global->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() ==
            function.getOperation())
          globals.push_back(global);
      });
      Operation *last = nullptr;
      for (memref::GetGlobalOp global : globals) {
        if (last)
          global->moveAfter(last);
        else
          global->moveBefore(&entry, entry.begin());
        last = global;
      }
    }
  }

  LogicalResult declareRuntime() {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    Type i32 = IntegerType::get(context, 32);
    mirror = hetero::declareRuntimeFunction(
        module, kMirror, FunctionType::get(context, {pointer, i64}, {pointer}),
        getArgument());
    copy = hetero::declareRuntimeFunction(
        module, kCopy, FunctionType::get(context, {pointer, pointer, i64}, {}),
        getArgument());
    stageIn = hetero::declareRuntimeFunction(
        module, kStageIn,
        FunctionType::get(context, {pointer, i64, i32}, {pointer}),
        getArgument());
    stageOut = hetero::declareRuntimeFunction(
        module, kStageOut,
        FunctionType::get(context, {pointer, pointer, i64, i32}, {}),
        getArgument());
    return success(mirror && copy && stageIn && stageOut);
  }

  /// Bytes per element of `type` in memory.
  int64_t elementBytes(Operation *anchor, Type type) {
    return std::max<int64_t>(
        1, int64_t(DataLayout::closest(anchor).getTypeSize(type)));
  }

  LogicalResult place(Operation *op, Placement &placement) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (!placement.onDevice(alloc.getResult()))
        return success();
      if (!alloc.getType().getLayout().isIdentity())
        return alloc.emitError(
            "hetero-gpu-device-buffers: an allocation with a layout is not "
            "supported; expected the identity layout that bufferization gives "
            "temporaries");
      Value memref;
      awaited(b, loc, [&](Type token, Value start) {
        auto device = gpu::AllocOp::create(
            b, loc, alloc.getType(), token, ValueRange{start},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        memref = device.getMemref();
        return device.getAsyncToken();
      });
      placement.alias(memref, alloc.getResult());
      alloc.replaceAllUsesWith(memref);
      alloc.erase();
      return success();
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      if (placement.onDevice(alloca.getResult()))
        return alloca.emitError(
            "hetero-gpu-device-buffers: a stack allocation that a kernel "
            "uses cannot be device memory; expected memref.alloc");
      return success();
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (!placement.onDevice(dealloc.getMemref()))
        return success();
      awaited(b, loc, [&](Type token, Value start) {
        return gpu::DeallocOp::create(b, loc, token, ValueRange{start},
                                      dealloc.getMemref())
            .getAsyncToken();
      });
      dealloc.erase();
      return success();
    }
    if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      if (placement.onDevice(global.getResult())) {
        Value device = mirrorGlobal(global);
        placement.alias(device, global.getResult());
        hostOf[device] = global.getResult();
      }
      return success();
    }
    if (auto copyOp = dyn_cast<memref::CopyOp>(op)) {
      Value source = copyOp.getSource(), target = copyOp.getTarget();
      bool fromDevice = placement.onDevice(source);
      bool toDevice = placement.onDevice(target);
      if (!fromDevice && !toDevice)
        return success();
      if (fromDevice && toDevice)
        linalg::CopyOp::create(b, loc, source, target);
      else
        awaited(b, loc, [&](Type token, Value start) {
          return gpu::MemcpyOp::create(b, loc, token, ValueRange{start}, target,
                                       source)
              .getAsyncToken();
        });
      copyOp.erase();
      return success();
    }
    if (isa<memref::LoadOp, memref::StoreOp>(op)) {
      auto load = dyn_cast<memref::LoadOp>(op);
      auto store = dyn_cast<memref::StoreOp>(op);
      Value memref = load ? load.getMemref() : store.getMemref();
      if (inKernel(op) || !placement.onDevice(memref))
        return success();
      if (!op->getParentOfType<func::FuncOp>())
        return op->emitError("hetero-gpu-device-buffers: a host access of "
                             "device memory outside a func.func; expected "
                             "host code in functions");
      stageElement(op, placement);
      return success();
    }
    auto call = cast<func::CallOp>(op);
    auto callee = getOperation().lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || !callee.isDeclaration() ||
        call.getCallee().starts_with("hrt_cuda_") ||
        takesDeviceAddresses(call, deviceCollectives))
      return success();
    if (isCheckpointCall(call.getCallee()))
      return checkpointHost(call);
    llvm::DenseMap<Operation *, Value> staged;
    for (auto [index, operand] : llvm::enumerate(call.getOperands())) {
      if (isMemRef(operand) && placement.onDevice(operand))
        return call.emitError()
               << "hetero-gpu-device-buffers: @" << call.getCallee()
               << " takes device buffer operand #" << index
               << " as a memref; expected a runtime function that takes "
                  "addresses";
      if (failed(stageOperand(call, index, placement, staged)))
        return failure();
    }
    return success();
  }

  /// A checkpoint names a global's buffer (operand 0), which the runtime
  /// keeps from the checkpoint's opening to its commit and may restore a
  /// recovered checkpoint into: it gets the global's host buffer, the same
  /// on every call, and the runtime copies the device copy to it as the
  /// checkpoint opens and back after a restore (hrt_cuda_mirror_copy,
  /// through hrt_ckpt_options::copy_state).
  LogicalResult checkpointHost(func::CallOp call) {
    if (call.getNumOperands() == 0)
      return success();
    SmallVector<Operation *> chain;
    memref::ExtractAlignedPointerAsIndexOp extract =
        addressSource(call.getOperand(0), chain);
    if (!extract)
      return success();
    Value host = hostOf.lookup(extract.getSource());
    if (!host) {
      // A global only the host touches is its host buffer already.
      if (!isa_and_present<memref::GetGlobalOp>(
              extract.getSource().getDefiningOp()))
        return call.emitError()
               << "hetero-gpu-device-buffers: @" << call.getCallee()
               << " checkpoints a buffer that is not a memref.global's; "
                  "expected the training state in globals";
      return success();
    }
    OpBuilder b(call);
    IRMapping mapping;
    mapping.map(
        extract.getResult(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, call.getLoc(), host)
            .getResult());
    for (Operation *op : chain)
      b.clone(*op, mapping);
    call->setOperand(0, mapping.lookup(call.getOperand(0)));
    // The device address it was computed from, if nothing else reads it.
    chain.insert(chain.begin(), extract);
    for (Operation *op : llvm::reverse(chain))
      if (op->use_empty())
        op->erase();
    return success();
  }

  static bool isCheckpointCall(StringRef callee) {
    return callee == "hrt_mlir_ckpt_tensor" || callee == "hrt_mlir_ckpt_chunk";
  }

  /// Rewrites `get_global` into the device copy of its global:
  ///   %host = memref.get_global @g
  ///   %device = hrt_cuda_mirror(aligned pointer of %host, bytes)
  /// with the memref descriptor of %host pointing at %device.
  Value mirrorGlobal(memref::GetGlobalOp global) {
    OpBuilder b(global);
    b.setInsertionPointAfter(global);
    Location loc = global.getLoc();
    MemRefType type = global.getType();
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = b.getI64Type();
    // The descriptor the LLVM lowering gives a ranked memref (64-bit
    // indices on the host): allocated and aligned pointers, offset, sizes
    // and strides.
    SmallVector<Type> fields = {pointer, pointer, i64};
    if (type.getRank() > 0) {
      Type array = LLVM::LLVMArrayType::get(i64, type.getRank());
      fields.append({array, array});
    }
    Type descriptorType = LLVM::LLVMStructType::getLiteral(context, fields);
    Value descriptor = UnrealizedConversionCastOp::create(
                           b, loc, descriptorType, global.getResult())
                           .getResult(0);
    Value host =
        LLVM::ExtractValueOp::create(b, loc, descriptor, ArrayRef<int64_t>{1});
    int64_t bytes =
        type.getNumElements() * elementBytes(global, type.getElementType());
    Value size = arith::ConstantIntOp::create(b, loc, i64, bytes);
    Value device = func::CallOp::create(b, loc, mirror, ValueRange{host, size})
                       .getResult(0);
    Value updated = LLVM::InsertValueOp::create(b, loc, descriptor, device,
                                                ArrayRef<int64_t>{0});
    updated = LLVM::InsertValueOp::create(b, loc, updated, device,
                                          ArrayRef<int64_t>{1});
    Value memref =
        UnrealizedConversionCastOp::create(b, loc, type, updated).getResult(0);
    global.getResult().replaceAllUsesExcept(memref, descriptor.getDefiningOp());
    return memref;
  }

  /// Host code reads or writes one element of device memory: through a
  /// host slot and a copy.
  void stageElement(Operation *op, Placement &placement) {
    auto load = dyn_cast<memref::LoadOp>(op);
    auto store = dyn_cast<memref::StoreOp>(op);
    Value memref = load ? load.getMemref() : store.getMemref();
    ValueRange indices = load ? load.getIndices() : store.getIndices();
    auto type = cast<MemRefType>(memref.getType());
    Type element = type.getElementType();
    auto function = op->getParentOfType<func::FuncOp>();
    OpBuilder entry = OpBuilder::atBlockBegin(&function.getBody().front());
    Value slot = memref::AllocaOp::create(entry, op->getLoc(),
                                          MemRefType::get({}, element));

    OpBuilder b(op);
    Location loc = op->getLoc();
    IndexMath math{b, loc};
    hetero::StridedLayout layout = hetero::stridedLayoutOf(b, loc, memref);
    Value position = math.value(layout.offset);
    for (auto [index, stride] : llvm::zip(indices, layout.strides))
      position = math.add(position, math.mul(index, math.value(stride)));
    int64_t bytes = elementBytes(op, element);
    Value start =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value device = math.toPointer(
        math.add(start, math.mul(position, math.constant(bytes))));
    Value host = math.toPointer(
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slot));
    Value size = arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes);
    if (load) {
      func::CallOp::create(b, loc, copy, ValueRange{host, device, size});
      Value value = memref::LoadOp::create(b, loc, slot, ValueRange{});
      load.getResult().replaceAllUsesWith(value);
    } else {
      memref::StoreOp::create(b, loc, store.getValueToStore(), slot,
                              ValueRange{});
      func::CallOp::create(b, loc, copy, ValueRange{device, host, size});
    }
    op->erase();
  }

  /// Gives operand `index` of runtime call `call`, when it is the address
  /// of device data, the address of a pinned host copy instead.
  /// `staged` maps the extractions already staged for this call to their
  /// host addresses, so that operands naming one buffer share its copy.
  LogicalResult stageOperand(func::CallOp call, unsigned index,
                             Placement &placement,
                             llvm::DenseMap<Operation *, Value> &staged) {
    SmallVector<Operation *> chain;
    memref::ExtractAlignedPointerAsIndexOp extract =
        addressSource(call.getOperand(index), chain);
    if (!extract || !placement.onDevice(extract.getSource()))
      return success();
    OpBuilder b(call);
    Location loc = call.getLoc();
    if (Value host = staged.lookup(extract)) {
      IRMapping mapping;
      mapping.map(extract.getResult(), host);
      for (Operation *op : chain)
        b.clone(*op, mapping);
      call->setOperand(index, mapping.lookup(call.getOperand(index)));
      return success();
    }
    // Where the host copy goes back: after the call, or after the waits of
    // the request it returns.
    SmallVector<Operation *> completions;
    for (Value result : call.getResults())
      for (Operation *user : result.getUsers())
        if (auto wait = dyn_cast<func::CallOp>(user);
            wait && wait.getCallee() == kWait)
          completions.push_back(wait);
    if (completions.empty()) {
      if (call.getNumResults() > 0 &&
          isa<LLVM::LLVMPointerType>(call.getResult(0).getType()) &&
          !call.getResult(0).use_empty())
        return call.emitError()
               << "hetero-gpu-device-buffers: the request of @"
               << call.getCallee()
               << " on device data is not waited for in this function by @"
               << kWait << "; expected its wait beside it";
      completions.push_back(call);
    }
    IndexMath math{b, loc};
    Value memref = extract.getSource();
    auto type = cast<MemRefType>(memref.getType());
    // The bytes from the aligned pointer to the view's last element.
    hetero::StridedLayout layout = hetero::stridedLayoutOf(b, loc, memref);
    Value last = math.value(layout.offset);
    Value empty = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
    for (auto [sizeEntry, stride] : llvm::zip(layout.sizes, layout.strides)) {
      Value size = math.value(sizeEntry);
      last = math.add(
          last, math.mul(math.sub(size, math.constant(1)), math.value(stride)));
      empty = b.createOrFold<arith::OrIOp>(
          loc, empty,
          b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, size,
                                        math.constant(0)));
    }
    Value span =
        math.mul(math.add(last, math.constant(1)),
                 math.constant(elementBytes(call, type.getElementType())));
    span = b.createOrFold<arith::SelectOp>(loc, empty, math.constant(0), span);
    Value bytes = math.toI64(span);
    Value device = math.toPointer(extract.getResult());
    Direction direction = directionOf(call.getCallee(), index);
    Type i32 = b.getI32Type();
    Value host =
        func::CallOp::create(
            b, loc, stageIn,
            ValueRange{device, bytes,
                       arith::ConstantIntOp::create(b, loc, i32, direction.in)})
            .getResult(0);
    // The same address arithmetic, from the host copy.
    IRMapping mapping;
    Value hostIndex = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), host));
    staged[extract] = hostIndex;
    mapping.map(extract.getResult(), hostIndex);
    for (Operation *op : chain)
      b.clone(*op, mapping);
    call->setOperand(index, mapping.lookup(call.getOperand(index)));
    for (Operation *completion : completions) {
      OpBuilder after(completion->getContext());
      after.setInsertionPointAfter(completion);
      func::CallOp::create(after, loc, stageOut,
                           ValueRange{host, device, bytes,
                                      arith::ConstantIntOp::create(
                                          after, loc, i32, direction.out)});
    }
    return success();
  }

  func::FuncOp mirror, copy, stageIn, stageOut;
  /// Each global's device copy, to its host buffer.
  llvm::DenseMap<Value, Value> hostOf;
};

} // namespace
