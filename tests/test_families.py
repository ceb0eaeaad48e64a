from hichunk.models.train.corpus.families import family_of
from hichunk.models.train.corpus.sources import REAL_PDFS, SOURCES


def test_packages_of_one_project_share_a_family():
    assert family_of("r-doc-info") == family_of("r-doc-pdf") == "r"
    assert family_of("lilypond-doc") == family_of("lilypond-doc-pdf") == family_of("lilypond-doc-html-zh")
    assert family_of("kicad-doc-en") == family_of("kicad-doc-zh")


def test_every_known_source_has_a_family_and_unknown_packages_stand_alone():
    for name in [*SOURCES, *(s.name for s in REAL_PDFS)]:
        assert family_of(name)
    assert family_of("some-new-package") == "some-new-package"
