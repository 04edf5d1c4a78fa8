"""A real PyTorch training job with a real DataLoader, for the sampled diagnoses of
`gpuwhy run` (tests/cli/sampled_torch_jobs.sh). Each knob is a behaviour of real jobs:

  --source jpeg     images JPEG-encoded in memory, decoded by PIL in the workers
  --source files    raw sample files read from --data, evicted from the page cache after
                    each read with --evict (so every read goes to the disk)
  --transforms heavy   torchvision decode + resize + blur + colour jitter + crop (CPU-bound)
  --transforms light   a crop of the decoded sample (cheap: the workers wait ahead)
  --workers N --worker-threads T   DataLoader workers and their intra-op threads
                    (torch.set_num_threads in worker_init_fn)
  --main-threads T --compute K     the training loop's threads and steps per batch
  --cgroup-procs F  join a cgroup (its cgroup.procs) first: the workers inherit it

The loop trains a small CNN for --seconds of wall time after the first batch. The
DataLoader has a timeout so that a stuck worker ends the job with an error instead of
hanging the test."""
import argparse
import io
import os
import sys
import time

import torch
import torchvision.transforms as T
from PIL import Image
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser()
parser.add_argument("--source", choices=["jpeg", "files"], default="jpeg")
parser.add_argument("--data", default="")
parser.add_argument("--evict", action="store_true")
parser.add_argument("--transforms", choices=["heavy", "light"], default="heavy")
parser.add_argument("--workers", type=int, default=1)
parser.add_argument("--worker-threads", type=int, default=1)
parser.add_argument("--main-threads", type=int, default=1)
parser.add_argument("--compute", type=int, default=1)
parser.add_argument("--seconds", type=float, default=8.0)
parser.add_argument("--cgroup-procs", default="")
args = parser.parse_args()

if args.cgroup_procs:
    with open(args.cgroup_procs, "w") as f:
        f.write(str(os.getpid()))

# One intra-op thread until the workers are forked: GNU OpenMP is not fork-safe, so a
# parent that already ran a parallel region would leave its forked workers hanging.
torch.set_num_threads(1)


def jpeg(seed):
    g = torch.Generator().manual_seed(seed)
    pixels = (torch.rand(3, 256, 256, generator=g) * 255).to(torch.uint8).permute(1, 2, 0).numpy()
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


class Samples(Dataset):
    def __init__(self):
        if args.source == "jpeg":
            self.blobs = [jpeg(i) for i in range(16)]
        else:
            self.paths = sorted(os.path.join(args.data, n) for n in os.listdir(args.data))
            if args.evict:
                for p in self.paths:
                    self._evict(p)
        if args.transforms == "heavy":
            self.tf = T.Compose([T.ToTensor(), T.Resize(448), T.GaussianBlur(15),
                                 T.ColorJitter(0.4, 0.4, 0.4), T.RandomResizedCrop(224)])
        else:
            self.tf = T.Compose([T.ToTensor(), T.CenterCrop(64)])

    @staticmethod
    def _evict(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        if args.source == "jpeg":
            img = Image.open(io.BytesIO(self.blobs[i % len(self.blobs)])).convert("RGB")
        else:
            path = self.paths[i % len(self.paths)]
            with open(path, "rb") as f:
                raw = f.read()
            if args.evict:
                self._evict(path)
            img = Image.frombytes("RGB", (128, 128), raw[: 3 * 128 * 128])
        return self.tf(img), i % 10


def worker_init(_):
    torch.set_num_threads(args.worker_threads)


loader = DataLoader(Samples(), batch_size=8, num_workers=args.workers, worker_init_fn=worker_init,
                    persistent_workers=args.workers > 0, timeout=120 if args.workers else 0)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2), torch.nn.ReLU(),
                            torch.nn.Conv2d(16, 16, 3, stride=2), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = iter(loader)  # forks the workers
torch.set_num_threads(args.main_threads)
end = None
steps = 0
for x, y in batches:
    if end is None:
        end = time.time() + args.seconds
    for _ in range(args.compute):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    steps += 1
    if time.time() >= end:
        break
print(f"loader_job: {steps} steps, loss {loss.item():.3f}", file=sys.stderr)
