//===- Corpus.cpp - training text and text generation ---------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// The data of a language model, read as bytes: a character-level vocabulary
// ordered by frequency, micro-batches of windows drawn from each replica's
// shard of the text (hetero.corpus_batch), and the streams that a trained
// model extends one character at a time (hetero.sample_context /
// hetero.sample_next).
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "hetero/Support/Hash.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <vector>

namespace hetero::rt {
namespace {

constexpr long long kMaxVocabulary = 256;

/// The corpus and the vocabularies built from it.
struct Corpus {
  std::string path;
  std::vector<unsigned char> bytes;
  /// Byte values by decreasing frequency (ties by value); bytes that occur.
  std::vector<unsigned char> byFrequency;
  /// Per vocabulary size: the token id of every byte value.
  std::map<long long, std::array<int32_t, 256>> encodings;
};

Corpus &corpus() {
  static Corpus instance;
  return instance;
}

/// The generated streams.
struct Generation {
  std::string prompt = "The ";
  double temperature = 0.8;
  std::mt19937_64 random{0};
  std::vector<std::string> streams;
  /// Per stream: the row of its last position in the latest context.
  std::vector<long long> lastRow;
  long long contextTokens = 0;
  long long vocab = 0;
};

Generation &generation() {
  static Generation instance;
  return instance;
}

hrt_status invalid(const char *operation, const std::string &detail) {
  return fail(HRT_ERROR_INVALID_ARGUMENT, CallSite{operation, nullptr, 0},
              detail);
}

hrt_status load(const char *operation, const std::string &path) {
  Corpus &text = corpus();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return invalid(operation, "cannot read the corpus '" + path +
                                  "': " + std::strerror(errno));
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (bytes.empty())
    return invalid(operation, "the corpus '" + path + "' is empty");
  std::array<long long, 256> counts{};
  for (unsigned char byte : bytes)
    ++counts[byte];
  std::vector<unsigned char> order;
  for (int value = 0; value < 256; ++value)
    if (counts[value])
      order.push_back(static_cast<unsigned char>(value));
  std::stable_sort(
      order.begin(), order.end(),
      [&](unsigned char a, unsigned char b) { return counts[a] > counts[b]; });
  text = Corpus{path, std::move(bytes), std::move(order), {}};
  return HRT_SUCCESS;
}

/// Opens the default corpus when none was opened.
hrt_status ensureLoaded(const char *operation) {
  if (!corpus().bytes.empty())
    return HRT_SUCCESS;
  return load(operation, HRT_DEFAULT_CORPUS);
}

hrt_status checkVocabulary(const char *operation, long long vocab) {
  if (vocab < 2 || vocab > kMaxVocabulary)
    return invalid(operation, "the vocabulary size " + std::to_string(vocab) +
                                  " is not between 2 and 256");
  return ensureLoaded(operation);
}

/// How many byte values have a token id of their own among `vocab` ids:
/// all of them when they fit, else the vocab - 1 most frequent.
long long ownIds(long long vocab) {
  long long distinct = static_cast<long long>(corpus().byFrequency.size());
  return distinct <= vocab ? distinct : vocab - 1;
}

/// The token id of every byte value for `vocab` ids: when the corpus holds
/// more distinct bytes than that, the vocab - 1 most frequent ones get
/// their own id and the rest share the last.
const std::array<int32_t, 256> &encoding(long long vocab) {
  Corpus &text = corpus();
  auto [it, inserted] = text.encodings.try_emplace(vocab);
  if (inserted) {
    long long own = ownIds(vocab);
    it->second.fill(int32_t(vocab - 1));
    for (long long id = 0; id < own; ++id)
      it->second[text.byFrequency[size_t(id)]] = int32_t(id);
  }
  return it->second;
}

/// The byte of token id `id`; '?' for the id that stands for rare bytes and
/// for ids no byte has.
char decode(long long vocab, long long id) {
  if (id < 0 || id >= ownIds(vocab))
    return '?';
  return static_cast<char>(corpus().byFrequency[size_t(id)]);
}

} // namespace
} // namespace hetero::rt

using namespace hetero::rt;
using hetero::splitMix64;

extern "C" hrt_status hrt_data_open(const char *path) {
  if (!path || !*path)
    return invalid("hrt_data_open", "the corpus path is empty");
  return load("hrt_data_open", path);
}

extern "C" hrt_status hrt_data_vocabulary(long long vocab, char *bytes) {
  if (hrt_status status = checkVocabulary("hrt_data_vocabulary", vocab))
    return status;
  if (!bytes)
    return invalid("hrt_data_vocabulary", "the output is null");
  for (long long id = 0; id < vocab; ++id)
    bytes[id] = decode(vocab, id);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_data_batch(long long step, long long replica,
                                     long long microbatch, long long replicas,
                                     long long vocab, long long sequences,
                                     long long tokens, int *input,
                                     int *target) {
  const char *operation = "hrt_data_batch";
  if (hrt_status status = checkVocabulary(operation, vocab))
    return status;
  if (!input || !target)
    return invalid(operation, "an output is null");
  if (replicas < 1 || replica < 0 || replica >= replicas)
    return invalid(operation, "replica " + std::to_string(replica) +
                                  " is not one of " + std::to_string(replicas));
  if (sequences < 1 || tokens < 1 || step < 0 || microbatch < 0)
    return invalid(operation,
                   "a batch of " + std::to_string(sequences) + " x " +
                       std::to_string(tokens) + " tokens at step " +
                       std::to_string(step) + ", micro-batch " +
                       std::to_string(microbatch) + " is not a batch");
  const Corpus &text = corpus();
  long long size = static_cast<long long>(text.bytes.size());
  // Replica r reads the r-th of `replicas` contiguous shards.
  long long begin = size * replica / replicas;
  long long end = size * (replica + 1) / replicas;
  if (end - begin < tokens + 1)
    return invalid(operation,
                   "the corpus '" + text.path + "' (" + std::to_string(size) +
                       " bytes) is too short: each of its " +
                       std::to_string(replicas) + " shards needs at least " +
                       std::to_string(tokens + 1) + " bytes for windows of " +
                       std::to_string(tokens) + " tokens and their targets");
  const std::array<int32_t, 256> &ids = encoding(vocab);
  long long windows = end - begin - tokens;
  for (long long s = 0; s < sequences; ++s) {
    uint64_t key = splitMix64(splitMix64(splitMix64(splitMix64(uint64_t(step)) ^
                                                    uint64_t(microbatch)) ^
                                         uint64_t(s)) ^
                              uint64_t(replica));
    long long offset = begin + static_cast<long long>(key % uint64_t(windows));
    for (long long t = 0; t < tokens; ++t) {
      input[s * tokens + t] = ids[text.bytes[size_t(offset + t)]];
      target[s * tokens + t] = ids[text.bytes[size_t(offset + t + 1)]];
    }
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sample_begin(const char *prompt, double temperature,
                                       unsigned long long seed) {
  if (!prompt)
    return invalid("hrt_sample_begin", "the prompt is null");
  if (!(temperature >= 0.0) || !std::isfinite(temperature))
    return invalid("hrt_sample_begin",
                   "the temperature must be a finite number >= 0");
  Generation &state = generation();
  state = Generation();
  state.prompt = prompt;
  state.temperature = temperature;
  state.random.seed(seed);
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sample_context(long long vocab, long long streams,
                                         long long tokens, int *context) {
  const char *operation = "hrt_sample_context";
  if (hrt_status status = checkVocabulary(operation, vocab))
    return status;
  if (!context || streams < 1 || tokens < 1)
    return invalid(operation, "a context of " + std::to_string(streams) +
                                  " x " + std::to_string(tokens) +
                                  " tokens is not a context");
  Generation &state = generation();
  if (state.streams.empty()) {
    state.streams.assign(size_t(streams), state.prompt);
    state.vocab = vocab;
  }
  if (static_cast<long long>(state.streams.size()) != streams ||
      state.vocab != vocab)
    return invalid(operation, "the context has " + std::to_string(streams) +
                                  " streams over " + std::to_string(vocab) +
                                  " token ids, the generation began with " +
                                  std::to_string(state.streams.size()) +
                                  " over " + std::to_string(state.vocab));
  const std::array<int32_t, 256> &ids = encoding(vocab);
  state.lastRow.assign(size_t(streams), 0);
  state.contextTokens = tokens;
  for (long long s = 0; s < streams; ++s) {
    const std::string &text = state.streams[size_t(s)];
    // The last `tokens` characters, left-aligned; an empty stream starts
    // from the most frequent character.
    long long length =
        std::min<long long>(static_cast<long long>(text.size()), tokens);
    long long first = static_cast<long long>(text.size()) - length;
    std::fill(context + s * tokens, context + (s + 1) * tokens, 0);
    for (long long t = 0; t < length; ++t)
      context[s * tokens + t] =
          ids[static_cast<unsigned char>(text[size_t(first + t)])];
    state.lastRow[size_t(s)] = s * tokens + std::max<long long>(length - 1, 0);
  }
  return HRT_SUCCESS;
}

extern "C" hrt_status hrt_sample_next(const float *logits, long long rows,
                                      long long vocab, float *log_probability) {
  const char *operation = "hrt_sample_next";
  Generation &state = generation();
  if (!logits || !log_probability)
    return invalid(operation, "a pointer is null");
  long long expected =
      static_cast<long long>(state.streams.size()) * state.contextTokens;
  if (state.lastRow.empty() || rows != expected || vocab != state.vocab)
    return invalid(operation, "the logits are " + std::to_string(rows) + " x " +
                                  std::to_string(vocab) +
                                  ", expected one row per "
                                  "position of the last context (" +
                                  std::to_string(expected) + " x " +
                                  std::to_string(state.vocab) + ")");
  double sum = 0.0;
  std::vector<double> weights(static_cast<size_t>(vocab));
  for (size_t s = 0; s < state.streams.size(); ++s) {
    const float *row = logits + state.lastRow[s] * vocab;
    double top = *std::max_element(row, row + vocab);
    if (!std::isfinite(top))
      return invalid(operation, "the logits of stream " + std::to_string(s) +
                                    " are not finite");
    // Log-probabilities under the model (temperature 1).
    double total = 0.0;
    for (long long v = 0; v < vocab; ++v)
      total += std::exp(double(row[v]) - top);
    long long chosen = std::max_element(row, row + vocab) - row;
    if (state.temperature > 0.0) {
      double mass = 0.0;
      for (long long v = 0; v < vocab; ++v)
        mass += weights[size_t(v)] =
            std::exp((double(row[v]) - top) / state.temperature);
      double u = double(state.random() >> 11) * 0x1.0p-53 * mass;
      for (chosen = 0; chosen + 1 < vocab; ++chosen) {
        u -= weights[size_t(chosen)];
        if (u < 0.0)
          break;
      }
    }
    sum += double(row[chosen]) - top - std::log(total);
    state.streams[s].push_back(decode(vocab, chosen));
  }
  *log_probability = float(sum / double(state.streams.size()));
  return HRT_SUCCESS;
}

extern "C" long long hrt_sample_streams(void) {
  return static_cast<long long>(generation().streams.size());
}

extern "C" const char *hrt_sample_text(long long stream) {
  const Generation &state = generation();
  if (stream < 0 || stream >= static_cast<long long>(state.streams.size()))
    return nullptr;
  return state.streams[size_t(stream)].c_str();
}
