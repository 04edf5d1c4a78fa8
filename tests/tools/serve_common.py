"""What the Python helpers of serve's tests share (serve_load.py, prometheus_e2e.py)."""
import socket


def free_port():
    """A TCP port free on loopback now (bound then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
