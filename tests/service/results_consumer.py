"""A results-feed consumer as a process of its own, for the tests that kill one.

``python -m tests.service.results_consumer PORT GROUP CONSUMER LOG [ACK_DELAY]``: reads
``StreamResults`` with a lease of :data:`LEASE` seconds; for each batch writes
``got <id> <game> <kind>`` lines to LOG (flushed), waits ACK_DELAY seconds, writes
``ack <id>`` lines and then acknowledges the batch. A test SIGKILLs it while it waits: the
batch stays unacknowledged. The ``ack`` lines come before the call, so an entry without
one was certainly not acknowledged when the consumer died; an entry with one may not have
been either (killed between the line and the call), and then comes back to another
consumer like the rest: a test counts those as "at least".
"""

from __future__ import annotations

import asyncio
import sys

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

from tests.chaos_helpers import ADMIN_TOKEN

LEASE = 10
"""This consumer's lease in seconds: longer than its own time to acknowledge on a loaded
machine. With 1 s, a consumer beside CPU hogs at load 10 took its own unacknowledged
batches back again and again, and entries reached the fifth delivery and were parked, so
the consumer that came after it never saw them. Another consumer takes over a killed one's
entries after *its* lease (``XAUTOCLAIM``'s idle time is the claimer's)."""


async def main(port: int, group: str, consumer: str, log_path: str, delay: float) -> None:
    """Consume until killed (see the module)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.GameServiceStub(channel)
        with open(log_path, "a", buffering=1) as log:
            async for msg in stub.StreamResults(pb.StreamResultsRequest(
                    admin_token=ADMIN_TOKEN, group=group, consumer=consumer, max_batch=20,
                    lease_seconds=LEASE)):
                for r in msg.results:
                    log.write(f"got {r.entry_id} {r.game_id} {r.kind}\n")
                await asyncio.sleep(delay)
                for r in msg.results:
                    log.write(f"ack {r.entry_id}\n")
                await stub.AckResults(pb.AckResultsRequest(
                    admin_token=ADMIN_TOKEN, group=group,
                    entry_ids=[r.entry_id for r in msg.results]))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4],
                     float(sys.argv[5]) if len(sys.argv) > 5 else 0.0))
