"""ndb's toolkit: one class per kind, and the entities dataset's bytes are ndb's own encoding under a pinned cache key."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import version

import pytest

from stratabench.datasets import entities as E
from stratabench.layers.mappers.ndb_toolkit import NDB_ENCODER, generate, ndb_class, ndb_context
from stratabench.systems.lazy.messages import EntityMessage


def test_ndb_classes_are_named_by_kind_and_made_once() -> None:
    cls = ndb_class("text", 10, "expando")
    assert cls.__name__ == "TextExpando10" and cls._get_kind() == "TextExpando10"
    assert ndb_class("text", 10, "expando") is cls
    assert ndb_class("text", 10, "dynamic")._properties == {}


@pytest.mark.parametrize("flavour", ["model", "expando"])
def test_stored_bytes_are_ndbs_own_encoding(flavour: str) -> None:
    from google.cloud import ndb
    from google.cloud.ndb import model

    def content(blob: bytes) -> object:
        # Parsed, not bytes: upb's map order differs between processes, and
        # the stored bytes may come from another one (the dataset cache).
        message = EntityMessage.FromString(blob)
        return E.message_values(message), E.flags_of_message(message)

    dataset = generate("mixed", 10, flavour)
    cls = ndb_class("mixed", 10, flavour)
    with ndb_context().use():
        for ident in (1, 50, 100):
            instance = cls(key=ndb.Key(dataset.kind, ident), **dataset.values(ident))
            produced = model._entity_to_protobuf(instance)._pb.SerializeToString()
            assert content(produced) == content(dataset.blob(ident))
    fresh = NDB_ENCODER.encode("mixed", 10, flavour, E.entity_values("mixed", 10, E.DEFAULT_SEED))
    with ndb_context().use():
        again = [cls(key=ndb.Key(dataset.kind, i), **dataset.values(i)) for i in (1, 2)]
        # Within one process ndb's encoder reproduces its own bytes exactly.
        assert [model._entity_to_protobuf(x)._pb.SerializeToString() for x in again] == fresh[:2]


def test_the_dataset_cache_key_names_the_generator_and_ndbs_release() -> None:
    # Pinned: bytes cached under this key by an earlier checkout are read as they are.
    assert E._cache_key("TextModel100", 2016, NDB_ENCODER) == (
        f"entities-v1-TextModel100-seed2016-ndb{version('google-cloud-ndb')}")  # fmt: skip


def test_ndbs_client_starts_no_thread_and_refuses_any_rpc() -> None:
    # Built once in the zygote (EntitiesSuite.warm): a real gRPC channel would start six threads a fork leaves behind.
    script = textwrap.dedent("""
        import os
        from google.cloud.datastore_v1.types import datastore
        from stratabench.errors import UnavailableError
        from stratabench.layers.mappers.ndb_toolkit import ndb_context
        before = len(os.listdir("/proc/self/task"))
        context = ndb_context()
        print(len(os.listdir("/proc/self/task")) - before)
        try:
            context.client.stub.lookup(datastore.LookupRequest(project_id='stratabench'))
        except UnavailableError as error:
            print("refused:", error)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    started, refused = done.stdout.splitlines()
    assert started == "0"
    assert refused.startswith("refused: ndb runs offline")
