"""host.gpu_shared: a second process runs matmuls on the same GPU while the job trains.
--fixed: no second process."""
import multiprocessing as mp
import time

import torch

import common


def neighbour(stop_after_s):
    dev = torch.device("cuda")
    a = torch.randn(8192, 8192, device=dev)
    end = time.time() + stop_after_s
    while time.time() < end:
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    other = None
    if not args.fixed:
        ctx = mp.get_context("spawn")
        other = ctx.Process(target=neighbour, args=(60,), daemon=True)
        other.start()
        time.sleep(5)  # let it create its context and start computing
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(4)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(2048, 4096, device=dev)

    def step(_):
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "host.gpu_shared")
    if other is not None:
        other.terminate()


if __name__ == "__main__":
    main()
