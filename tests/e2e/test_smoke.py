"""The app starts on an empty workspace, opens on the sample data and raises nothing."""


def test_app_opens_without_error(app_server, page, open_app):
    open_app(page, app_server)

    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()
    assert "nDCG Lab" in page.title()
    headings = page.locator('[data-testid="stMain"] :is(h1, h2, h3)')
    assert headings.count() > 0, "the first page shows no heading"
    assert headings.first.is_visible()
