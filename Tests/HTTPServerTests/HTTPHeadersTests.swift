import XCTest
@testable import HTTPServer

final class HTTPHeadersTests: XCTestCase {
    func testLookupIgnoresCaseAndKeepsOrder() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        headers.add("Set-Cookie", "a=1")
        headers.add("set-cookie", "b=2")
        XCTAssertEqual(headers["CONTENT-type"], "text/plain")
        XCTAssertEqual(headers.values(for: "SET-COOKIE"), ["a=1", "b=2"])
        XCTAssertEqual(headers.map(\.name), ["Content-Type", "Set-Cookie", "set-cookie"])
        XCTAssertNil(headers["Content-Typ"])
        XCTAssertNil(headers["Content-Type-X"])
        XCTAssertTrue(headers.contains("content-type"))
        XCTAssertEqual(headers.count, 3)
    }

    func testSubscriptSetReplacesAllAndNilRemoves() {
        var headers = HTTPHeaders([("A", "1"), ("B", "2"), ("a", "3")])
        headers["a"] = "x"
        XCTAssertEqual(headers.map(\.name), ["A", "B"])
        XCTAssertEqual(headers["A"], "x")
        headers["C"] = "new"
        XCTAssertEqual(headers.map(\.name), ["A", "B", "C"])
        headers["b"] = nil
        XCTAssertEqual(headers.map(\.name), ["A", "C"])
        headers.remove("C")
        XCTAssertEqual(headers.count, 1)
    }

    func testNamesMatchIsASCIICaseInsensitiveOnly() {
        XCTAssertTrue(HTTPHeaders.namesMatch("X-Thing", "x-THING"))
        XCTAssertFalse(HTTPHeaders.namesMatch("X-Thing", "X-Thin"))
        XCTAssertFalse(HTTPHeaders.namesMatch("[", "{"))  // 0x5B vs 0x7B differ by 0x20 but are not letters
        XCTAssertTrue(HTTPHeaders.namesMatch("", ""))
    }

    func testQueryItemsDecodePercentAndPlus() {
        let request = HTTPRequest(method: "GET", path: "/", query: "a=1&b=hello+world&c=%41%2b%26&d&&e=&%C3%A9=%E2%9C%93&bad=%zz%4")
        let items = request.queryItems()
        XCTAssertEqual(items.map(\.name), ["a", "b", "c", "d", "e", "é", "bad"])
        XCTAssertEqual(items.map(\.value), ["1", "hello world", "A+&", "", "", "✓", "%zz%4"])
    }

    func testQueryItemsRepeatedAndEmpty() {
        XCTAssertTrue(HTTPRequest(method: "GET", path: "/").queryItems().isEmpty)
        XCTAssertTrue(HTTPRequest(method: "GET", path: "/", query: "").queryItems().isEmpty)
        let items = HTTPRequest(method: "GET", path: "/", query: "tag=a&tag=b&x==y").queryItems()
        XCTAssertEqual(items.map(\.name), ["tag", "tag", "x"])
        XCTAssertEqual(items.map(\.value), ["a", "b", "=y"])
    }

    func testTextResponse() {
        let response = HTTPResponse.text(404, "missing\n")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.headers["content-type"], "text/plain; charset=utf-8")
        XCTAssertEqual(response.body, Array("missing\n".utf8))
    }

    func testRequestHeaderHelper() {
        let request = HTTPRequest(method: "GET", path: "/", headers: ["Host": "example"])
        XCTAssertEqual(request.header("host"), "example")
    }
}
