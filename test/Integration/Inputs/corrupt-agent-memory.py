"""Flips one byte in both slots of a checkpoint segment that an agent holds.

  corrupt-agent-memory.py SOCKET SEGMENT

The agent serving SOCKET keeps each segment as a memfd named SEGMENT
(ckpt-r<owner>); its data starts after a 4096-byte header, one slot after
the other. The slots' checksums no longer match, so recovery must skip
them, as it would memory that went bad.
"""
import os
import subprocess
import sys

socket, segment = sys.argv[1], sys.argv[2]
pid = subprocess.run(["pgrep", "-f", socket + "$"], capture_output=True,
                     text=True, check=True).stdout.split()[0]
fds = f"/proc/{pid}/fd"
for fd in os.listdir(fds):
    target = os.readlink(os.path.join(fds, fd))
    if target.startswith(f"/memfd:{segment} "):
        size = os.stat(os.path.join(fds, fd)).st_size
        shard = (size - 4096) // 2
        with open(os.path.join(fds, fd), "r+b") as memory:
            for slot in range(2):
                memory.seek(4096 + slot * shard + shard // 2)
                byte = memory.read(1)
                memory.seek(4096 + slot * shard + shard // 2)
                memory.write(bytes([byte[0] ^ 0x40]))
        print(f"corrupted both slots of {segment}")
        break
else:
    sys.exit(f"no segment {segment} in the agent on {socket}")
