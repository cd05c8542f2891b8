// Re-exported so that `import HTTPVCR` still gives everything it gave before the cassette model became its own target.
@_exported import HTTPVCRCassettes
