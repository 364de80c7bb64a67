# Gives the first hetero.schedule of the module on stdin a micro-batch size
# of 4 and adds a copy of it named @<name>_b2 with micro-batches of 2: the
# same schedule at two micro-batch sizes.
import re
import sys

text = sys.stdin.read()
match = re.search(r"(  hetero\.schedule @(\w+) for @\w+ group_size = \d+)( \{.*?\n  \}\n)",
                  text, re.S)
if not match:
    sys.exit("no hetero.schedule in the input")
head, name, body = match.group(1), match.group(2), match.group(3)
four = head + " microbatch_size = 4" + body
two = head.replace("@" + name, "@" + name + "_b2", 1) + " microbatch_size = 2" + body
sys.stdout.write(text[:match.start()] + four + two + text[match.end():])
