//===- HeteroDialect.cpp - hetero dialect and attributes ------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/Dialect/Utils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace hetero;

#include "hetero/Dialect/HeteroDialect.cpp.inc"
#include "hetero/Dialect/HeteroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "hetero/Dialect/HeteroAttrs.cpp.inc"

void HeteroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "hetero/Dialect/HeteroAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "hetero/Dialect/HeteroOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

LogicalResult HeteroDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto expect = [&](bool ok, StringRef what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' expects " << what << ", got "
                           << value;
  };
  if (name == GridAttrHelper::getNameStr() ||
      name == PipelineAttrHelper::getNameStr() ||
      name == ScheduleAttrHelper::getNameStr())
    return expect(isa<FlatSymbolRefAttr>(value), "a flat symbol reference");
  if (name == StageAttrHelper::getNameStr() ||
      name == StagesAttrHelper::getNameStr() ||
      name == PeakStashAttrHelper::getNameStr() ||
      name == PeakStashBytesAttrHelper::getNameStr()) {
    auto integer = dyn_cast<IntegerAttr>(value);
    return expect(integer && integer.getType().isInteger(64) &&
                      !integer.getValue().isNegative(),
                  "a non-negative i64 integer");
  }
  if (name == DensityAttrHelper::getNameStr()) {
    auto fraction = dyn_cast<FloatAttr>(value);
    return expect(fraction && fraction.getValueAsDouble() >= 0.0 &&
                      fraction.getValueAsDouble() <= 1.0,
                  "a float in [0, 1] (the fraction of non-zero elements)");
  }
  if (name == ShardDimAttrHelper::getNameStr()) {
    auto dim = dyn_cast<IntegerAttr>(value);
    auto global = dyn_cast<memref::GlobalOp>(op);
    int64_t rank = global ? global.getType().getRank() : 0;
    return expect(global && dim && dim.getType().isInteger(64) &&
                      dim.getInt() >= 0 && dim.getInt() < rank,
                  "on a memref.global, an i64 dimension of it (the one the "
                  "tensor-parallel ranks split)");
  }
  if (name == PlanTableAttrHelper::getNameStr()) {
    auto table = dyn_cast<ArrayAttr>(value);
    return expect(table && llvm::all_of(table, llvm::IsaPred<DictionaryAttr>),
                  "an array of dictionaries (one per plan)");
  }
  return op->emitError() << "unknown hetero attribute '" << name
                         << "'; expected one of "
                         << llvm::join(
                                ArrayRef<StringRef>{
                                    GridAttrHelper::getNameStr(),
                                    PipelineAttrHelper::getNameStr(),
                                    ScheduleAttrHelper::getNameStr(),
                                    PlanTableAttrHelper::getNameStr(),
                                    StageAttrHelper::getNameStr(),
                                    StagesAttrHelper::getNameStr(),
                                    PeakStashAttrHelper::getNameStr(),
                                    PeakStashBytesAttrHelper::getNameStr(),
                                    DensityAttrHelper::getNameStr(),
                                    ShardDimAttrHelper::getNameStr()},
                                ", ");
}

//===----------------------------------------------------------------------===//
// CompressAttr
//===----------------------------------------------------------------------===//

/// The wire-size model's name for a compressor of the dialect.
static wire::Compressor toWireCompressor(Compressor compressor) {
  switch (compressor) {
  case Compressor::none:
    return wire::Compressor::None;
  case Compressor::fp16:
    return wire::Compressor::Fp16;
  case Compressor::bf16:
    return wire::Compressor::Bf16;
  case Compressor::topk:
    return wire::Compressor::TopK;
  case Compressor::dgc:
    return wire::Compressor::Dgc;
  case Compressor::randomk:
    return wire::Compressor::RandomK;
  case Compressor::efsignsgd:
    return wire::Compressor::EfSignSgd;
  case Compressor::onebit:
    return wire::Compressor::OneBit;
  case Compressor::qsgd:
    return wire::Compressor::Qsgd;
  }
  llvm_unreachable("unknown compressor");
}

wire::Compression CompressAttr::getWireCompression() const {
  return {toWireCompressor(getCompressor()), getRatio().convertToDouble(),
          getLevels()};
}

LogicalResult CompressAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Compressor compressor,
                                   llvm::APFloat ratioValue, int64_t levels,
                                   bool errorFeedback, Placement placement,
                                   CollectiveScheme scheme, int64_t nodeSize) {
  double ratio = ratioValue.convertToDouble();
  if (!(ratio > 0.0 && ratio <= 1.0))
    return emitError() << "compression ratio must be in (0, 1], got " << ratio;
  if (ratio != 1.0 && !wire::isSparsifier(toWireCompressor(compressor)))
    return emitError() << "'ratio' applies only to topk, dgc and randomk, "
                          "not to '"
                       << stringifyCompressor(compressor) << "'";
  if (levels < 1)
    return emitError() << "qsgd needs at least 1 quantisation level, got "
                       << levels;
  if (levels != kDefaultLevels && compressor != Compressor::qsgd)
    return emitError() << "'levels' applies only to qsgd, not to '"
                       << stringifyCompressor(compressor) << "'";
  if (errorFeedback && compressor == Compressor::none)
    return emitError() << "error feedback needs a compressor";
  if (nodeSize < 1)
    return emitError() << "node_size must be at least 1, got " << nodeSize;
  return success();
}

Attribute CompressAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<Compressor> compressor = symbolizeCompressor(keyword);
  if (!compressor) {
    parser.emitError(loc) << "unknown compressor '" << keyword
                          << "', expected one of "
                          << enumCaseNames(stringifyCompressor,
                                           getMaxEnumValForCompressor());
    return {};
  }
  double ratio = 1.0;
  int64_t levels = kDefaultLevels;
  bool errorFeedback = false;
  Placement placement = Placement::gpu;
  CollectiveScheme scheme = CollectiveScheme::allreduce;
  int64_t nodeSize = 1;
  llvm::SmallDenseSet<StringRef> seen;

  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    if (!seen.insert(key).second) {
      parser.emitError(keyLoc) << "'" << key << "' is given twice";
      return {};
    }
    if (key == "error_feedback") {
      errorFeedback = true;
      continue;
    }
    if (parser.parseEqual())
      return {};
    if (key == "ratio") {
      if (parser.parseFloat(ratio))
        return {};
    } else if (key == "levels") {
      if (parser.parseInteger(levels))
        return {};
    } else if (key == "node_size") {
      if (parser.parseInteger(nodeSize))
        return {};
    } else if (key == "placement" || key == "scheme") {
      SMLoc valueLoc = parser.getCurrentLocation();
      StringRef value;
      if (parser.parseKeyword(&value))
        return {};
      if (key == "placement") {
        std::optional<Placement> parsed = symbolizePlacement(value);
        if (!parsed) {
          parser.emitError(valueLoc)
              << "unknown placement '" << value << "', expected cpu or gpu";
          return {};
        }
        placement = *parsed;
      } else {
        std::optional<CollectiveScheme> parsed =
            symbolizeCollectiveScheme(value);
        if (!parsed) {
          parser.emitError(valueLoc)
              << "unknown scheme '" << value
              << "', expected allreduce, allgather or alltoall";
          return {};
        }
        scheme = *parsed;
      }
    } else {
      parser.emitError(keyLoc)
          << "unknown compression parameter '" << key
          << "', expected ratio, levels, error_feedback, placement, scheme "
             "or node_size";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<CompressAttr>(
      loc, context, *compressor, llvm::APFloat(ratio), levels, errorFeedback,
      placement, scheme, nodeSize);
}

void CompressAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyCompressor(getCompressor());
  if (getRatio().convertToDouble() != 1.0) {
    printer << ", ratio = ";
    printer.printFloat(getRatio());
  }
  if (getLevels() != kDefaultLevels)
    printer << ", levels = " << getLevels();
  if (getErrorFeedback())
    printer << ", error_feedback";
  if (getPlacement() != Placement::gpu)
    printer << ", placement = " << stringifyPlacement(getPlacement());
  if (getScheme() != CollectiveScheme::allreduce)
    printer << ", scheme = " << stringifyCollectiveScheme(getScheme());
  if (getNodeSize() != 1)
    printer << ", node_size = " << getNodeSize();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// CheckpointAttr
//===----------------------------------------------------------------------===//

LogicalResult
CheckpointAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t replicas, ReplicaPlacement, int64_t every) {
  if (replicas < 1)
    return emitError() << "checkpoint replicas must be >= 1 (the local copy "
                          "counts), got "
                       << replicas;
  if (every < 1)
    return emitError() << "checkpoint every must be >= 1 steps, got " << every;
  return success();
}

//===----------------------------------------------------------------------===//
// SyncAttr
//===----------------------------------------------------------------------===//

LogicalResult SyncAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               SyncPolicy policy, FloatAttr window,
                               int64_t period, SyncSemantics semantics,
                               bool lock, int64_t syncEveryMicrobatches,
                               bool adamVarRescale) {
  if (window && !(window.getValueAsDouble() >= 0.0))
    return emitError() << "sync window must be >= 0 (a fraction of the "
                          "iteration time), got "
                       << window.getValueAsDouble();
  if (period < 1)
    return emitError() << "sync period must be >= 1, got " << period;
  if (syncEveryMicrobatches < 0)
    return emitError() << "sync_every_microbatches must be >= 1, got "
                       << syncEveryMicrobatches;
  if (policy == SyncPolicy::dynamic)
    return success();
  // All-reduce has none of the dynamic groups' knobs.
  StringRef dynamicOnly;
  if (window)
    dynamicOnly = "window";
  else if (period != 10)
    dynamicOnly = "period";
  else if (semantics != SyncSemantics::sliding)
    dynamicOnly = "semantics";
  else if (!lock)
    dynamicOnly = "lock";
  else if (syncEveryMicrobatches)
    dynamicOnly = "sync_every_microbatches";
  else if (adamVarRescale)
    dynamicOnly = "adam_var_rescale";
  if (dynamicOnly.empty())
    return success();
  return emitError() << "sync parameter '" << dynamicOnly
                     << "' needs policy = dynamic";
}

Attribute SyncAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::optional<SyncPolicy> policy;
  FloatAttr window;
  int64_t period = 10, syncEvery = 0;
  SyncSemantics semantics = SyncSemantics::sliding;
  bool lock = true, rescale = false;
  llvm::SmallDenseSet<StringRef> seen;
  // A keyword value among `names`, or an error that lists them.
  auto parseChoice = [&](StringRef key, ArrayRef<StringRef> names,
                         StringRef &value) -> LogicalResult {
    SMLoc valueLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&value))
      return failure();
    if (llvm::is_contained(names, value))
      return success();
    InFlightDiagnostic diagnostic = parser.emitError(valueLoc)
                                    << "unknown " << key << " '" << value
                                    << "', expected";
    for (auto [index, name] : llvm::enumerate(names))
      diagnostic << (index ? (index + 1 == names.size() ? " or " : ", ") : " ")
                 << name;
    return failure();
  };
  if (parser.parseLess())
    return {};
  do {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (!seen.insert(key).second) {
      parser.emitError(keyLoc) << "'" << key << "' is given twice";
      return {};
    }
    StringRef value;
    if (key == "policy") {
      if (failed(parseChoice(key, {"allreduce", "dynamic"}, value)))
        return {};
      policy = *symbolizeSyncPolicy(value);
    } else if (key == "semantics") {
      if (failed(parseChoice(key, {"sliding", "periodic"}, value)))
        return {};
      semantics = *symbolizeSyncSemantics(value);
    } else if (key == "lock" || key == "adam_var_rescale") {
      if (failed(parseChoice(key, {"true", "false"}, value)))
        return {};
      (key == "lock" ? lock : rescale) = value == "true";
    } else if (key == "window") {
      double fraction;
      if (parser.parseFloat(fraction))
        return {};
      window = FloatAttr::get(Float64Type::get(parser.getContext()), fraction);
    } else if (key == "period") {
      if (parser.parseInteger(period))
        return {};
    } else if (key == "sync_every_microbatches") {
      // 0 stands for the default (once per step), so it is not a value.
      SMLoc valueLoc = parser.getCurrentLocation();
      if (parser.parseInteger(syncEvery))
        return {};
      if (syncEvery < 1) {
        parser.emitError(valueLoc)
            << "sync_every_microbatches must be >= 1, got " << syncEvery;
        return {};
      }
    } else {
      parser.emitError(keyLoc)
          << "unknown sync parameter '" << key
          << "', expected policy, window, period, semantics, lock, "
             "sync_every_microbatches or adam_var_rescale";
      return {};
    }
  } while (succeeded(parser.parseOptionalComma()));
  if (parser.parseGreater())
    return {};
  if (!policy) {
    parser.emitError(loc) << "sync needs a policy (policy = allreduce or "
                             "policy = dynamic)";
    return {};
  }
  return parser.getChecked<SyncAttr>(loc, parser.getContext(), *policy, window,
                                     period, semantics, lock, syncEvery,
                                     rescale);
}

void SyncAttr::print(AsmPrinter &printer) const {
  printer << "<policy = " << stringifySyncPolicy(getPolicy());
  if (FloatAttr window = getWindow()) {
    printer << ", window = ";
    printer.printFloat(window.getValue());
  }
  if (getPeriod() != 10)
    printer << ", period = " << getPeriod();
  if (getSemantics() != SyncSemantics::sliding)
    printer << ", semantics = " << stringifySyncSemantics(getSemantics());
  if (!getLock())
    printer << ", lock = false";
  if (getSyncEveryMicrobatches())
    printer << ", sync_every_microbatches = " << getSyncEveryMicrobatches();
  if (getAdamVarRescale())
    printer << ", adam_var_rescale = true";
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Optimizer attributes
//===----------------------------------------------------------------------===//

/// Checks that the optional float parameter `name` lies in [low, high) (or
/// (low, high) when `openLow`).
static LogicalResult verifyInRange(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef owner, StringRef name,
                                   FloatAttr value, double low, double high,
                                   bool openLow) {
  if (!value)
    return success();
  double v = value.getValueAsDouble();
  bool above = openLow ? v > low : v >= low;
  if (above && v < high)
    return success();
  std::ostringstream message;
  message << owner.str() << " " << name.str() << " must be in "
          << (openLow ? "(" : "[") << low << ", " << high << "), got " << v;
  return emitError() << message.str();
}

LogicalResult SgdAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              FloatAttr lr, FloatAttr momentum) {
  double infinity = std::numeric_limits<double>::infinity();
  if (failed(verifyInRange(emitError, "sgd", "lr", lr, 0.0, infinity,
                           /*openLow=*/true)))
    return failure();
  return verifyInRange(emitError, "sgd", "momentum", momentum, 0.0, 1.0,
                       /*openLow=*/false);
}

LogicalResult AdamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               FloatAttr lr, FloatAttr beta1, FloatAttr beta2,
                               FloatAttr eps) {
  double infinity = std::numeric_limits<double>::infinity();
  if (failed(verifyInRange(emitError, "adam", "lr", lr, 0.0, infinity,
                           /*openLow=*/true)) ||
      failed(verifyInRange(emitError, "adam", "beta1", beta1, 0.0, 1.0,
                           /*openLow=*/false)) ||
      failed(verifyInRange(emitError, "adam", "beta2", beta2, 0.0, 1.0,
                           /*openLow=*/false)))
    return failure();
  return verifyInRange(emitError, "adam", "eps", eps, 0.0, infinity,
                       /*openLow=*/true);
}

double AdamAttr::getBeta1Value() const {
  return getBeta1() ? getBeta1().getValueAsDouble() : 0.9;
}
double AdamAttr::getBeta2Value() const {
  return getBeta2() ? getBeta2().getValueAsDouble() : 0.999;
}
double AdamAttr::getEpsValue() const {
  return getEps() ? getEps().getValueAsDouble() : 1e-8;
}

/// Parses `<key = number, ...>` where `keys` lists the accepted keys, the
/// first one required; fills `values` (null for those absent) as f64
/// attributes.
static LogicalResult
parseOptimizerParameters(AsmParser &parser, StringRef optimizer,
                         ArrayRef<StringRef> keys,
                         SmallVectorImpl<FloatAttr> &values) {
  values.assign(keys.size(), FloatAttr());
  Builder builder(parser.getContext());
  auto parseEntry = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    double value = 0.0;
    if (parser.parseKeyword(&key))
      return failure();
    const StringRef *found = llvm::find(keys, key);
    if (found == keys.end()) {
      InFlightDiagnostic diagnostic =
          parser.emitError(loc) << "unknown " << optimizer << " parameter '"
                                << key << "', expected one of ";
      llvm::interleaveComma(keys, diagnostic);
      return diagnostic;
    }
    FloatAttr &slot = values[found - keys.begin()];
    if (slot)
      return parser.emitError(loc) << "'" << key << "' is given twice";
    if (parser.parseEqual() || parser.parseFloat(value))
      return failure();
    slot = builder.getF64FloatAttr(value);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater,
                                     parseEntry))
    return failure();
  if (!values.front())
    return parser.emitError(parser.getCurrentLocation())
           << optimizer << " needs '" << keys.front() << "'";
  return success();
}

static void printOptimizerParameters(AsmPrinter &printer,
                                     ArrayRef<StringRef> keys,
                                     ArrayRef<FloatAttr> values) {
  printer << "<";
  bool first = true;
  for (auto [key, value] : llvm::zip(keys, values)) {
    if (!value)
      continue;
    printer << (first ? "" : ", ") << key << " = ";
    printer.printFloat(value.getValue());
    first = false;
  }
  printer << ">";
}

Attribute SgdAttr::parse(AsmParser &parser, Type) {
  SmallVector<FloatAttr> values;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(
          parseOptimizerParameters(parser, "sgd", {"lr", "momentum"}, values)))
    return {};
  return parser.getChecked<SgdAttr>(loc, parser.getContext(), values[0],
                                    values[1]);
}

void SgdAttr::print(AsmPrinter &printer) const {
  printOptimizerParameters(printer, {"lr", "momentum"},
                           {getLr(), getMomentum()});
}

Attribute AdamAttr::parse(AsmParser &parser, Type) {
  SmallVector<FloatAttr> values;
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parseOptimizerParameters(parser, "adam",
                                      {"lr", "beta1", "beta2", "eps"}, values)))
    return {};
  return parser.getChecked<AdamAttr>(loc, parser.getContext(), values[0],
                                     values[1], values[2], values[3]);
}

void AdamAttr::print(AsmPrinter &printer) const {
  printOptimizerParameters(printer, {"lr", "beta1", "beta2", "eps"},
                           {getLr(), getBeta1(), getBeta2(), getEps()});
}
