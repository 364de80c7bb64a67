//===- SplitBackward.cpp - input and weight gradients as two functions ----===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// A backward function computes the gradient of its stage's input, which
// the previous stage waits for, and the gradients of its parameters, which
// nothing waits for until the optimizer step. Zero-bubble schedules run
// the second later, in the bubbles. The split is a partition of the
// backward's body: the first part is the backward slice of the input
// gradient, the second the rest of what the parameter gradients need, and
// the values the second reads of the first (products' output gradients,
// re-computed activations) are returned by the first and taken by the
// second. A call whose results feed both parts is split the same way, so
// that the weight gradients of a called transformer block move to the
// second part too.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace hetero;

/// True for what the second part re-creates instead of taking from the
/// first: constants, empty tensors of static shape and fills of them with
/// constants.
static bool isRecreatable(Operation *op) {
  if (!op)
    return false;
  if (op->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return empty.getDynamicSizes().empty();
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics() &&
           llvm::all_of(fill->getOperands(), [](Value operand) {
             return isRecreatable(operand.getDefiningOp());
           });
  return false;
}

/// The values `op` reads: its operands, and what the ops of its regions
/// read from around it.
static SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  for (Region &region : op->getRegions()) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(region, above);
    values.append(above.begin(), above.end());
  }
  return values;
}

FailureOr<BackwardSplitter::Parts>
BackwardSplitter::split(func::FuncOp function, ArrayRef<bool> firstResults,
                        StringRef firstName, StringRef secondName,
                        std::optional<unsigned> fixedArguments) {
  if (function.isExternal() || !function.getBody().hasOneBlock())
    return function.emitError()
           << "hetero-derive-backward: cannot split '@" << function.getSymName()
           << "' into its input and weight gradients: it needs a body of "
              "one block";
  OpBuilder builder(function);
  builder.setInsertionPointAfter(function);
  auto first = cast<func::FuncOp>(builder.clone(*function));
  first.setSymName(firstName);
  symbols.insert(first);
  Block &block = first.front();
  Operation *terminator = block.getTerminator();

  // The first part: the backward slice of its results. A call whose
  // results it needs only some of is split, and its first half joins.
  DenseSet<Value> needed;
  for (auto [operand, wanted] :
       llvm::zip_equal(terminator->getOperands(), firstResults))
    if (wanted)
      needed.insert(operand);
  DenseSet<Operation *> inFirst;
  SmallVector<Operation *> reversed;
  for (Operation &op : llvm::reverse(block.without_terminator()))
    reversed.push_back(&op);
  for (Operation *op : reversed) {
    std::vector<bool> mask;
    for (Value result : op->getResults())
      mask.push_back(needed.contains(result));
    if (llvm::none_of(mask, [](bool wanted) { return wanted; }))
      continue;
    auto call = dyn_cast<func::CallOp>(op);
    auto callee =
        call ? symbols.lookup<func::FuncOp>(call.getCallee()) : func::FuncOp();
    if (callee && callee.isPrivate() && !callee.isExternal() &&
        !llvm::all_of(mask, [](bool wanted) { return wanted; })) {
      FailureOr<Parts> parts = splitCallee(callee, mask);
      if (failed(parts)) {
        symbols.erase(first);
        return failure();
      }
      builder.setInsertionPoint(call);
      auto firstCall = func::CallOp::create(builder, call.getLoc(),
                                            parts->first, call.getOperands());
      SmallVector<Value> secondOperands;
      for (unsigned argument : parts->secondArguments)
        secondOperands.push_back(call.getOperand(argument));
      unsigned kept = llvm::count(mask, true);
      llvm::append_range(secondOperands,
                         firstCall.getResults().drop_front(kept));
      auto secondCall = func::CallOp::create(builder, call.getLoc(),
                                             parts->second, secondOperands);
      unsigned nextFirst = 0, nextSecond = 0;
      for (auto [result, wanted] : llvm::zip_equal(call.getResults(), mask))
        result.replaceAllUsesWith(wanted ? firstCall.getResult(nextFirst++)
                                         : secondCall.getResult(nextSecond++));
      call.erase();
      op = firstCall;
    }
    inFirst.insert(op);
    for (Value value : readValues(op))
      needed.insert(value);
  }

  // The second part: what its results need that the first does not
  // compute.
  DenseSet<Value> neededSecond;
  SmallVector<Value> secondResults;
  for (auto [operand, wanted] :
       llvm::zip_equal(terminator->getOperands(), firstResults))
    if (!wanted) {
      neededSecond.insert(operand);
      secondResults.push_back(operand);
    }
  SmallVector<Operation *> secondOps;
  DenseSet<Operation *> inSecond;
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (inFirst.contains(&op) || llvm::none_of(op.getResults(), [&](Value v) {
          return neededSecond.contains(v);
        }))
      continue;
    secondOps.push_back(&op);
    inSecond.insert(&op);
    for (Value value : readValues(&op))
      neededSecond.insert(value);
  }
  std::reverse(secondOps.begin(), secondOps.end());

  // What the second part reads from outside itself: arguments it takes,
  // constants it re-creates, and the values the first part saves for it.
  llvm::SetVector<Value> outside;
  for (Operation *op : secondOps)
    for (Value value : readValues(op))
      if (Operation *def = value.getDefiningOp();
          !def || !inSecond.contains(def))
        outside.insert(value);
  for (Value result : secondResults)
    if (Operation *def = result.getDefiningOp();
        !def || !inSecond.contains(def))
      outside.insert(result);
  Parts parts;
  parts.first = first;
  if (fixedArguments)
    for (unsigned index = 0; index < *fixedArguments; ++index)
      parts.secondArguments.push_back(index);
  llvm::SetVector<Value> saved;
  // Constants, empty tensors and constant fills are re-created in the
  // second part rather than handed over: operands first.
  llvm::SetVector<Operation *> constants;
  std::function<void(Operation *)> recreate = [&](Operation *op) {
    for (Value operand : op->getOperands())
      recreate(operand.getDefiningOp());
    constants.insert(op);
  };
  SmallVector<unsigned> readArguments;
  for (Value value : outside) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      unsigned number = argument.getArgNumber();
      if (!fixedArguments)
        readArguments.push_back(number);
      else if (number >= *fixedArguments)
        saved.insert(value);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (isRecreatable(def))
      recreate(def);
    else
      saved.insert(value);
  }
  llvm::sort(readArguments);
  llvm::append_range(parts.secondArguments, readArguments);

  SmallVector<Type> secondInputs;
  for (unsigned argument : parts.secondArguments)
    secondInputs.push_back(block.getArgument(argument).getType());
  for (Value value : saved)
    secondInputs.push_back(value.getType());
  builder.setInsertionPointAfter(first);
  Location loc = function.getLoc();
  auto second = func::FuncOp::create(
      builder, loc, secondName,
      builder.getFunctionType(secondInputs,
                              ValueRange(secondResults).getTypes()));
  second.setVisibility(function.getVisibility());
  symbols.insert(second);
  Block *body = second.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [index, argument] : llvm::enumerate(parts.secondArguments))
    mapping.map(block.getArgument(argument), body->getArgument(index));
  for (auto [index, value] : llvm::enumerate(saved))
    mapping.map(value, body->getArgument(parts.secondArguments.size() + index));
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  for (Operation *op : secondOps)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value result : secondResults)
    returned.push_back(mapping.lookup(result));
  func::ReturnOp::create(builder, loc, returned);
  parts.second = second;

  // The first part returns its results and what it saves, and keeps only
  // its own ops.
  SmallVector<Value> firstReturned;
  for (auto [operand, wanted] :
       llvm::zip_equal(terminator->getOperands(), firstResults))
    if (wanted)
      firstReturned.push_back(operand);
  llvm::append_range(firstReturned, saved);
  builder.setInsertionPoint(terminator);
  func::ReturnOp::create(builder, terminator->getLoc(), firstReturned);
  terminator->erase();
  SmallVector<Operation *> others;
  for (Operation &op : block.without_terminator())
    if (!inFirst.contains(&op))
      others.push_back(&op);
  for (Operation *op : llvm::reverse(others))
    op->erase();
  first.setFunctionType(
      builder.getFunctionType(first.getFunctionType().getInputs(),
                              ValueRange(firstReturned).getTypes()));
  simplifyDerivative(first);
  simplifyDerivative(second);
  return parts;
}

FailureOr<BackwardSplitter::Parts>
BackwardSplitter::splitCallee(func::FuncOp callee,
                              const std::vector<bool> &firstResults) {
  auto key = std::make_pair(callee.getOperation(), firstResults);
  auto found = callees.find(key);
  if (found != callees.end())
    return found->second;
  std::string name = callee.getSymName().str();
  SmallVector<bool> mask(firstResults.begin(), firstResults.end());
  FailureOr<Parts> parts =
      split(callee, mask, name + "_input", name + "_weight");
  if (failed(parts))
    return failure();
  callees[key] = *parts;
  splitCallees.insert(callee);
  return parts;
}

void BackwardSplitter::eraseIfUnused(func::FuncOp function) {
  if (SymbolTable::symbolKnownUseEmpty(function, module))
    symbols.erase(function);
}

void BackwardSplitter::eraseUnusedParts() {
  // A split callee may be called only by another split callee.
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *callee : llvm::to_vector(splitCallees))
      if (SymbolTable::symbolKnownUseEmpty(callee, module)) {
        splitCallees.remove(callee);
        symbols.erase(callee);
        erased = true;
      }
  }
  splitCallees.clear();
  callees.clear();
}
