"""What the Python helpers of serve's tests share (serve_load.py, prometheus_e2e.py)."""
import signal
import socket
import subprocess


def free_port():
    """A TCP port free on loopback now (bound then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stop(p, seconds=10):
    """SIGTERM to a process this test started, SIGKILL when it lingers; waited for."""
    if p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(seconds)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
