"""kernel.launch_bound: a tiny MLP at batch size 8, hundreds of microsecond-scale kernels per
step. --fixed: CUDA Graphs replay the whole step (one launch) at a larger batch."""
import torch

import common


def main():
    args = common.parse_args(__doc__, default_steps=200)
    dev = common.require_cuda()
    layers = [torch.nn.Linear(64, 64) for _ in range(48)]
    model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.ReLU())]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    batch = 512 if args.fixed else 8
    x = torch.randn(batch, 64, device=dev)

    def plain_step():
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    if args.fixed:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                plain_step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            plain_step()

        def step(_):
            graph.replay()
    else:
        def step(_):
            plain_step()

    common.run_steps(args, step, "kernel.launch_bound")


if __name__ == "__main__":
    main()
