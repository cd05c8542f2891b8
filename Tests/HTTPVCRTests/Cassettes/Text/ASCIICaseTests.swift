import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// The hand-rolled comparisons that replace `caseInsensitiveCompare` and `lowercased()` on the replay path.
@Suite struct ASCIICaseTests {
    @Test func foldsASCIILettersOnly() {
        #expect("Cookie".equalsIgnoringASCIICase("cOOKIE"))
        #expect("Proxy-Authorization".equalsIgnoringASCIICase("proxy-authorization"))
        #expect(!"Cookie".equalsIgnoringASCIICase("Cookies"))
        #expect(!"@".equalsIgnoringASCIICase("`"), "0x40 and 0x60 differ by the case bit but are not letters")
        #expect(!"[".equalsIgnoringASCIICase("{"))
        #expect(!"É".equalsIgnoringASCIICase("é"), "only ASCII is folded")
        #expect("é".equalsIgnoringASCIICase("é"))
        #expect("".equalsIgnoringASCIICase(""))
        #expect("Host"[...].equalsIgnoringASCIICase("HOST"), "substrings too")
    }

    @Test func changesCaseOnlyWhenThereIsSomethingToChange() {
        #expect("bench.local".lowercasedIfNeeded == "bench.local")
        #expect("Example.COM".lowercasedIfNeeded == "example.com")
        #expect("ÉCOLE.fr".lowercasedIfNeeded == "école.fr")
        #expect("GET".uppercasedIfNeeded == "GET")
        #expect("patch".uppercasedIfNeeded == "PATCH")
    }

    @Test func hostsAreDecodedOnlyWhenEscaped() {
        #expect(URL(string: "http://Example.com:8080/a")?.decodedHost == "Example.com")
        #expect(URL(string: "http://ex%41mple.com/")?.decodedHost == "exAmple.com")
        #expect(URL(string: "http://[::1]:8080/")?.decodedHost == "::1")
        #expect(URL(string: "/relative")?.decodedHost == nil)
    }

    @Test func headerFieldsAreFoundAndReplacedWhateverTheirCase() {
        var headers = [RecordedHeader("Content-Type", "text/plain"), RecordedHeader("X-A", "1"), RecordedHeader("x-a", "2")]
        #expect(headers[field: "content-type"] == "text/plain")
        #expect(headers[field: "X-a"] == "1", "the first of several")
        #expect(headers[field: "Content-Length"] == nil)
        headers[field: "X-A"] = "3"
        #expect(headers == [RecordedHeader("Content-Type", "text/plain"), RecordedHeader("X-A", "3")], "duplicates folded into the first")
        headers[field: "CONTENT-TYPE"] = nil
        #expect(headers == [RecordedHeader("X-A", "3")])
    }

    @Test func secureHeadersAreFilteredWhateverTheirCase() throws {
        var request = URLRequest(url: URL(string: "http://h/")!)
        request.setValue("Bearer secret", forHTTPHeaderField: "authorization")
        request.setValue("a=b", forHTTPHeaderField: "COOKIE")
        request.setValue("kept", forHTTPHeaderField: "X-Authorization-Hint")
        let filtered = try #require(RequestFilter.filter(request, with: VCRConfiguration()))
        #expect(filtered.value(forHTTPHeaderField: "Authorization") == VCRConfiguration.filteredPlaceholder)
        #expect(filtered.value(forHTTPHeaderField: "Cookie") == "a=[FILTERED]")  // cookie names stay
        #expect(filtered.value(forHTTPHeaderField: "X-Authorization-Hint") == "kept")
    }

    @Test(arguments: [
        ("http://h/a", true), ("https://h/a", true), ("HTTPS://h/a", true), ("Http://h", true), ("http:h", true),
        ("ftp://h/a", false), ("httpx://h/a", false), ("htt://h", false), ("file:///tmp/http:", false),
        ("https", false),
    ])
    func httpSchemesAreReadOffTheURLText(_ text: String, _ isHTTP: Bool) throws {
        let url = try #require(URL(string: text))
        #expect(url.hasHTTPScheme == isHTTP)
        let scheme = url.scheme ?? ""
        #expect(url.hasHTTPScheme == (scheme.equalsIgnoringASCIICase("http") || scheme.equalsIgnoringASCIICase("https")))
    }

    @Test func aRelativeURLIsReadWithItsBase() throws {
        let base = try #require(URL(string: "https://h/dir/"))
        #expect(try #require(URL(string: "page", relativeTo: base)).hasHTTPScheme)
    }
}
