"""Presence Proof protocol v1 (see docs/proof-protocol.md), tag side: keys, challenges and responses.

Kept free of Bumble and of the ATT server so that the test vector can be checked on its
own and so that every tag variant computes from the same few lines."""

from __future__ import annotations

import hashlib
import hmac

SERVICE_UUID = "327c0001-652e-44d5-b154-9f067567c974"
CHALLENGE_UUID = "327c0002-652e-44d5-b154-9f067567c974"
RESPONSE_UUID = "327c0003-652e-44d5-b154-9f067567c974"

VERSION = 0x01
NONCE_LENGTH = 16
MAC_LENGTH = 16
CHALLENGE_LENGTH = 1 + NONCE_LENGTH
RESPONSE_LENGTH = 1 + MAC_LENGTH
MAC_LABEL = b"BGWv1"
KEY_DERIVATION_LABEL = b"BGW-TAG-KEY-v1"
KEY_LENGTH = 32


def derive_tag_key(master_key: bytes, tag_id: str) -> bytes:
    """K_tag = HMAC-SHA256(master_key, "BGW-TAG-KEY-v1" ‖ UTF8(tag id))."""
    return hmac.new(master_key, KEY_DERIVATION_LABEL + tag_id.encode("utf-8"), hashlib.sha256).digest()


def mac(tag_key: bytes, nonce: bytes) -> bytes:
    """first 16 bytes of HMAC-SHA256(K_tag, "BGWv1" ‖ nonce)."""
    return hmac.new(tag_key, MAC_LABEL + nonce, hashlib.sha256).digest()[:MAC_LENGTH]


def challenge(nonce: bytes) -> bytes:
    if len(nonce) != NONCE_LENGTH:
        raise ValueError(f"a nonce is {NONCE_LENGTH} bytes, not {len(nonce)}")
    return bytes((VERSION,)) + nonce


def response(tag_key: bytes, challenge_value: bytes) -> bytes:
    """The Response value a genuine tag serves for a written Challenge value; raises
    ValueError for a challenge that is not version 1 or not 17 bytes."""
    if len(challenge_value) != CHALLENGE_LENGTH:
        raise ValueError(f"a challenge is {CHALLENGE_LENGTH} bytes, not {len(challenge_value)}")
    if challenge_value[0] != VERSION:
        raise ValueError(f"challenge version 0x{challenge_value[0]:02x} is not 0x{VERSION:02x}")
    return bytes((VERSION,)) + mac(tag_key, challenge_value[1:])


def verify(tag_key: bytes, challenge_value: bytes, response_value: bytes) -> bool:
    """What the gateway checks (used by the tests' GATT client)."""
    try:
        expected = response(tag_key, challenge_value)
    except ValueError:
        return False
    return hmac.compare_digest(expected, response_value)


def clone_key(genuine_key: bytes) -> bytes:
    """A clone copies identity and address but not the key: a fixed, different key, so
    its responses are well-formed and always wrong."""
    return hashlib.sha256(b"bgworld-clone" + genuine_key).digest()


def parse_key(text: str, what: str) -> bytes:
    try:
        key = bytes.fromhex(text)
    except ValueError as error:
        raise ValueError(f"{what} must be 64 hex digits: {error}") from error
    if len(key) != KEY_LENGTH:
        raise ValueError(f"{what} must be 64 hex digits (32 bytes), not {len(key)} bytes")
    return key
