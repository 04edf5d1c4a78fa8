"""kernel.fp32_math: large FP32 matmuls with TF32 disabled on a tensor-core GPU.
--fixed: the same model under torch.autocast(bfloat16)."""
import contextlib

import torch

import common


def main():
    args = common.parse_args(__doc__)
    dev = common.require_cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = torch.nn.Sequential(*[torch.nn.Linear(8192, 8192) for _ in range(4)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(4096, 8192, device=dev)

    def step(_):
        ctx = torch.autocast("cuda", dtype=torch.bfloat16) if args.fixed else contextlib.nullcontext()
        with ctx:
            loss = model(x).float().square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    common.run_steps(args, step, "kernel.fp32_math")


if __name__ == "__main__":
    main()
