/*===- hrt-corpus.c - training text and text generation --------------------===*\
|*                                                                            *|
|* Part of the hetero project.                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* RUN: hrt-corpus %t.dir | FileCheck %s
 *
 * The corpus "abracadabra\n" (a 5 times, b and r twice, c, d and the
 * newline once): ids by decreasing frequency, ties by byte value, and with
 * fewer ids than bytes the last id stands for the rest.
 * CHECK: vocabulary 4: [abr?]
 * CHECK: vocabulary 8: [abr\ncd??]
 *
 * Windows are substrings of the corpus, targets the next characters, the
 * same for the same (step, micro-batch), spread over the text by step, and
 * each replica reads inside its own half.
 * CHECK: windows are substrings with shifted targets: yes
 * CHECK: same batch twice: yes
 * CHECK: distinct offsets over 16 steps: {{([4-9]|1[0-9])}}
 * CHECK: replica 0 inside [0, 6): yes
 * CHECK: replica 1 inside [6, 12): yes
 *
 * CHECK: too short: hrt_data_batch (0 bytes): the corpus '{{.*}}abracadabra.txt' (12 bytes) is too short: each of its 4 shards needs at least 5 bytes for windows of 4 tokens and their targets
 * CHECK: missing: hrt_data_open (0 bytes): cannot read the corpus '{{.*}}missing.txt': No such file or directory
 * CHECK: empty: hrt_data_open (0 bytes): the corpus '{{.*}}empty.txt' is empty
 * CHECK: bad vocabulary: hrt_data_batch (0 bytes): the vocabulary size 300 is not between 2 and 256
 *
 * Greedy generation from the prompt "ab": the context holds the prompt's
 * ids left-aligned, the logits of its last position (row 1) choose 'r'
 * with probability 1/2 (log 0.5), and the stream grows by that character.
 * CHECK: context: 0 1 0 0
 * CHECK: next: abr, log-probability -0.6931
 * CHECK: context: 0 1 2 0
 * CHECK: wrong rows: hrt_sample_next (0 bytes): the logits are 3 x 4, expected one row per position of the last context (4 x 4)
 *
 * At temperature 1, a position whose logits leave one id all the mass
 * draws it; two streams grow independently from the same prompt.
 * CHECK: sampled: ab, ab -> abb, abb
 * CHECK: bad temperature: hrt_sample_begin (0 bytes): the temperature must be a finite number >= 0
 */

#include "hetero-rt/hrt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *text = "abracadabra\n";

static void writeFile(const char *path, const char *contents) {
  FILE *file = fopen(path, "wb");
  if (!file) {
    perror(path);
    exit(1);
  }
  fputs(contents, file);
  fclose(file);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  mkdir(argv[1], 0700);
  char corpus[4096], missing[4096], empty[4096];
  snprintf(corpus, sizeof corpus, "%s/abracadabra.txt", argv[1]);
  snprintf(missing, sizeof missing, "%s/missing.txt", argv[1]);
  snprintf(empty, sizeof empty, "%s/empty.txt", argv[1]);
  writeFile(corpus, text);
  writeFile(empty, "");
  if (hrt_data_open(corpus) != HRT_SUCCESS) {
    printf("open: %s\n", hrt_last_error());
    return 1;
  }

  char bytes[8];
  for (int vocab = 4; vocab <= 8; vocab += 4) {
    hrt_data_vocabulary(vocab, bytes);
    printf("vocabulary %d: [", vocab);
    for (int i = 0; i < vocab; ++i)
      printf(bytes[i] == '\n' ? "\\n" : "%c", bytes[i]);
    printf("]\n");
  }

  /* With 8 ids every byte has its own. */
  hrt_data_vocabulary(8, bytes);
  int input[3 * 4], target[3 * 4], again[3 * 4], againTarget[3 * 4];
  int substrings = 1;
  for (long long step = 0; step < 4; ++step) {
    hrt_data_batch(step, 0, 1, 1, 8, 3, 4, input, target);
    for (int s = 0; s < 3; ++s) {
      char window[6] = {0};
      for (int t = 0; t < 4; ++t)
        window[t] = bytes[input[s * 4 + t]];
      window[4] = bytes[target[s * 4 + 3]];
      for (int t = 0; t < 3; ++t)
        substrings &= target[s * 4 + t] == input[s * 4 + t + 1];
      substrings &= strstr(text, window) != NULL;
    }
  }
  printf("windows are substrings with shifted targets: %s\n",
         substrings ? "yes" : "no");
  hrt_data_batch(3, 0, 2, 1, 8, 3, 4, input, target);
  hrt_data_batch(3, 0, 2, 1, 8, 3, 4, again, againTarget);
  printf("same batch twice: %s\n",
         memcmp(input, again, sizeof input) == 0 &&
                 memcmp(target, againTarget, sizeof target) == 0
             ? "yes"
             : "no");
  /* Offsets 0..7 are possible; over 16 steps most of them occur. */
  int seen[8] = {0}, distinct = 0;
  for (long long step = 0; step < 16; ++step) {
    hrt_data_batch(step, 0, 0, 1, 8, 1, 4, input, target);
    char window[5] = {0};
    for (int t = 0; t < 4; ++t)
      window[t] = bytes[input[t]];
    int offset = (int)(strstr(text, window) - text);
    distinct += !seen[offset];
    seen[offset] = 1;
  }
  printf("distinct offsets over 16 steps: %d\n", distinct);
  /* Two replicas: halves [0, 6) and [6, 12); windows of 2 tokens plus the
   * target fit in 3 bytes. The window "ab" and "ra" occur in both halves,
   * so the check is on characters each half alone has: replica 0 never
   * reads 'd' or the newline, replica 1 never 'c'. */
  for (long long replica = 0; replica < 2; ++replica) {
    int inside = 1;
    for (long long step = 0; step < 32; ++step) {
      int window[2], next[2];
      hrt_data_batch(step, replica, 0, 2, 8, 1, 2, window, next);
      for (int t = 0; t < 2; ++t) {
        char c = bytes[window[t]], n = bytes[next[t]];
        if (replica == 0)
          inside &= c != 'd' && c != '\n' && n != 'd' && n != '\n';
        else
          inside &= c != 'c' && n != 'c';
      }
    }
    printf("replica %lld inside [%d, %d): %s\n", replica, replica ? 6 : 0,
           replica ? 12 : 6, inside ? "yes" : "no");
  }

  if (hrt_data_batch(0, 0, 0, 4, 8, 1, 4, input, target) != HRT_SUCCESS)
    printf("too short: %s\n", hrt_last_error());
  if (hrt_data_open(missing) != HRT_SUCCESS)
    printf("missing: %s\n", hrt_last_error());
  if (hrt_data_open(empty) != HRT_SUCCESS)
    printf("empty: %s\n", hrt_last_error());
  if (hrt_data_batch(0, 0, 0, 1, 300, 1, 4, input, target) != HRT_SUCCESS)
    printf("bad vocabulary: %s\n", hrt_last_error());

  /* Generation over a 4-id vocabulary (a, b, r, other). */
  hrt_sample_begin("ab", 0.0, 0);
  int context[4];
  hrt_sample_context(4, 1, 4, context);
  printf("context: %d %d %d %d\n", context[0], context[1], context[2],
         context[3]);
  /* Row 1 = (-1e30, -1e30, 0, 0): 'r' and '?' tie at probability 1/2 and
   * the lower id wins. */
  float logits[4 * 4];
  for (int i = 0; i < 16; ++i)
    logits[i] = 5.0f; /* rows other than 1 must be ignored */
  logits[4 + 0] = -1e30f;
  logits[4 + 1] = -1e30f;
  logits[4 + 2] = 0.0f;
  logits[4 + 3] = 0.0f;
  float logProbability = 0.0f;
  if (hrt_sample_next(logits, 4, 4, &logProbability) != HRT_SUCCESS) {
    printf("next: %s\n", hrt_last_error());
    return 1;
  }
  printf("next: %s, log-probability %.4f\n", hrt_sample_text(0),
         logProbability);
  hrt_sample_context(4, 1, 4, context);
  printf("context: %d %d %d %d\n", context[0], context[1], context[2],
         context[3]);
  if (hrt_sample_next(logits, 3, 4, &logProbability) != HRT_SUCCESS)
    printf("wrong rows: %s\n", hrt_last_error());

  hrt_sample_begin("ab", 1.0, 42);
  int contexts[2 * 3];
  hrt_sample_context(4, 2, 3, contexts);
  float rows[2 * 3 * 4];
  for (int i = 0; i < 24; ++i)
    rows[i] = -1e30f;
  rows[1 * 4 + 1] = 0.0f;       /* stream 0, position 1: 'b' */
  rows[(3 + 1) * 4 + 1] = 0.0f; /* stream 1, position 1: 'b' */
  printf("sampled: %s, %s -> ", hrt_sample_text(0), hrt_sample_text(1));
  hrt_sample_next(rows, 6, 4, &logProbability);
  printf("%s, %s\n", hrt_sample_text(0), hrt_sample_text(1));
  if (hrt_sample_begin("ab", -1.0, 0) != HRT_SUCCESS)
    printf("bad temperature: %s\n", hrt_last_error());
  return 0;
}
