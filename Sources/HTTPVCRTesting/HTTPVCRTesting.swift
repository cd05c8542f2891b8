// HTTPVCRTesting: cassettes per test for XCTest (`VCRTestCase`) and Swift Testing (the `.cassette` trait).
// `import HTTPVCRTesting` is enough in a test file: it brings HTTPVCR along.
@_exported import HTTPVCR
