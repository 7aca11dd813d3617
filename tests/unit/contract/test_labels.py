from __future__ import annotations

from esc.contract.labels import MAX_SOURCE_LEN, bounded, printable, record_label, source_label


def test_control_characters_and_undecodable_bytes_become_visible_escapes() -> None:
    assert printable("bad\x07name") == "bad\\x07name"
    assert printable("inv\udcff\udcfe") == "inv\\xff\\xfe"  # os.fsdecode(b"inv\xff\xfe")
    assert printable("plain name.csv") == "plain name.csv"
    assert printable(printable("bad\x07\udcff")) == printable("bad\x07\udcff")  # idempotent
    printable("x\udcff").encode("utf-8")  # encodable: a lone surrogate cannot be


def test_file_names_keep_their_normalization_source_names_do_not() -> None:
    nfd, nfc = "Cafe\u0301", "Caf\u00e9"
    assert printable(nfd) != printable(nfc)  # two files, two record ids
    assert source_label(nfd) == source_label(nfc) == nfc  # one source


def test_long_names_are_cut_with_a_hash_of_the_whole() -> None:
    a, b = "x" * 300, "x" * 299 + "y"
    assert len(source_label(a)) == MAX_SOURCE_LEN and source_label(a) != source_label(b)
    assert source_label(a) == source_label(a)
    assert bounded("short", 10) == "short"
    assert len(record_label("r" * 2000)) == 512
    assert source_label("") == "_"
