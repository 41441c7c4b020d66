"""Support for the tests and the remote-tier benchmarks: loopback servers on 127.0.0.1."""
