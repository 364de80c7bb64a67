"""Judges text sampled from a character-level model against its corpus.

Reads hetero-run's `sample <k> (<n> characters):` blocks, drops the prompt
from each, and measures how often the samples' character bigrams are among
the corpus's 30 most frequent ones. Random characters from the corpus's
alphabet would hit that set with probability 30 / |alphabet|^2; text that
learned the corpus's spelling hits it far more often. Prints both rates and
whether the samples reach at least ten times the random rate."""
import collections
import re
import sys

corpus_path, output_path, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
corpus = open(corpus_path, "rb").read().decode("latin-1")
top = {pair for pair, _ in
       collections.Counter(zip(corpus, corpus[1:])).most_common(30)}
alphabet = len(set(corpus))
random_rate = len(top) / alphabet ** 2

samples, current = [], None
for line in open(output_path, encoding="latin-1"):
    if re.match(r"sample \d+ \(\d+ characters\):$", line.rstrip("\n")):
        current = []
        samples.append(current)
    elif current is not None and not line.startswith("iteration "):
        current.append(line)
texts = ["".join(lines)[len(prompt):].rstrip("\n") for lines in samples]
pairs = [pair for text in texts for pair in zip(text, text[1:])]
if not pairs:
    sys.exit("no sampled text in " + output_path)
rate = sum(pair in top for pair in pairs) / len(pairs)
print(f"{len(texts)} samples, {len(pairs)} bigrams: {100 * rate:.1f}% among "
      f"the corpus's 30 most frequent, against {100 * random_rate:.2f}% for "
      f"random characters")
verdict = "closer" if rate >= 10 * random_rate else "NOT closer"
print(f"the samples are {verdict} to the corpus than random characters")
