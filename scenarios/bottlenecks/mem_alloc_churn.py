"""mem.alloc_churn: torch.cuda.empty_cache() every step, so the caching allocator returns its
memory and every step pays cudaMalloc/cudaFree again. --fixed: no empty_cache()."""
import torch

import common


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    model = common.small_cnn(torch, channels=128).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(i):
        x = torch.randn(32 + (i % 4) * 8, 3, 128, 128, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not args.fixed:
            torch.cuda.empty_cache()

    common.run_steps(args, step, "mem.alloc_churn")


if __name__ == "__main__":
    main()
