#!/usr/bin/env python3
"""A real SMTP server for the mail tests: aiosmtpd, saving each accepted mail as a file.

    smtp_capture.py PORT DIRECTORY [starttls|smtps CERT KEY]

Listens on 127.0.0.1:PORT (0 picks a free port) and writes every mail it accepts to
DIRECTORY/<n>.eml (the envelope's recipients in an X-Envelope-To header first, then how the
session was protected in X-Capture-TLS: "none", "starttls TLSv1.3", "smtps TLSv1.3"), written to a
temporary name and renamed, so a reader never sees half a mail. With `starttls CERT KEY` it
offers STARTTLS and refuses mail before it; with `smtps CERT KEY` it speaks TLS from the start.
Recipients whose mailbox starts with "reject" are refused with 550 (a permanent failure). Prints "listening PORT" once
it accepts connections, then runs until stdin closes or SIGTERM.
"""
import asyncio
import os
import signal
import sys
import threading

from aiosmtpd.controller import Controller


class Capture:
    def __init__(self, directory):
        self.directory = directory
        self.count = len([n for n in os.listdir(directory) if n.endswith(".eml")])
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # A recipient whose mailbox starts with "reject" does not exist: a permanent refusal.
        if address.lower().startswith("reject"):
            return "550 5.1.1 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            number = self.count
        path = os.path.join(self.directory, f"{number:06d}.eml")
        # The TLS object of the session's transport: after STARTTLS (session.ssl is set then), or
        # from the start (smtps); none on a plain session.
        tls = server.transport.get_extra_info("ssl_object") if server.transport else None
        protection = "none" if tls is None else f"{'starttls' if session.ssl is not None else 'smtps'} {tls.version()}"
        data = (b"X-Envelope-To: " + ", ".join(envelope.rcpt_tos).encode() + b"\r\n"
                + b"X-Capture-TLS: " + protection.encode() + b"\r\n" + envelope.original_content)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    options = {}
    if len(sys.argv) > 3:
        import ssl
        mode, cert, key = sys.argv[3:6]
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        if mode == "starttls":
            options = {"tls_context": context, "require_starttls": True}
        else:
            options = {"ssl_context": context}
    controller = Controller(Capture(directory), hostname="127.0.0.1", port=port, **options)
    if port == 0:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            controller.port = s.getsockname()[1]
    controller.start()
    print(f"listening {controller.port}", flush=True)
    done = threading.Event()
    # SIGTERM ends it at once (its listening socket goes with the process): a test's stop does not
    # depend on the end of stdin, whose pipe another child process may have inherited.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    controller.stop()


if __name__ == "__main__":
    main()
