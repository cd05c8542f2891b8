"""Writes this folder's YAHTTPVCR cassettes: python3 Tests/Fixtures/yahttpvcr/make-fixtures.py

YAHTTPVCR is an Objective-C library: it cannot run here, so these tapes are written from its format, as it saves
them. A cassette is an array of scenes {"id": chapter UUID, "type": 0...4, "data": ...}: 0 request (NSURLRequest),
1 response (NSHTTPURLResponse), 2 data (NSData as {"cls", "base64"}), 3 error (NSError), 4 completion (no data).
Scenes are in the order things happened, so chapters of concurrent requests interleave. A .json cassette is
NSJSONSerialization's pretty print; any other name is an XML property list of the same objects.

Everything is derived from the scenarios below (ids, Content-Length, base64), so the output is the same on every run.
"""

import base64
import json
import os
import plistlib
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "https://httpbin.org"
USER_AGENT = "HTTPVCRFixtures/1.0 CFNetwork/1410.0.3 Darwin/22.6.0"
# ada:lovelace: a credential in clear, which `vcr lint` must find in every one of these tapes.
AUTHORIZATION = "Basic YWRhOmxvdmVsYWNl"


def data(raw):
    return {"cls": "NSData", "base64": base64.b64encode(raw).decode()}


def httpbin_json(value):
    """httpbin's pretty-printed JSON."""
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def echoed_headers(extra=None):
    """The request headers as httpbin echoes them."""
    headers = {"Accept": "application/json", "Authorization": AUTHORIZATION, "Host": "httpbin.org",
               "User-Agent": USER_AGENT}
    headers.update(extra or {})
    return headers


class Tape:
    def __init__(self, name):
        self.name = name
        self.scenes = []
        self.chapters = 0

    def chapter_id(self):
        self.chapters += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.name}#{self.chapters}")).upper()

    def request(self, method, path, body=None, timeout=60, headers=None):
        chapter = self.chapter_id()
        fields = {"User-Agent": USER_AGENT, "Accept": "application/json", "Authorization": AUTHORIZATION}
        fields.update(headers or {})
        request = {"cls": "NSURLRequest", "method": method.lower(), "url": HOST + path, "headers": fields,
                   "cache": 0, "timeout": timeout, "cookies": True, "pipeline": False, "network": 0,
                   "cellular": True}
        if body is not None:
            request["body"] = data(body)
        self.scenes.append({"id": chapter, "type": 0, "data": request})
        return chapter

    def response(self, chapter, path, status=200, content_type="application/json", length=0, date=None):
        headers = {"Content-Type": content_type, "Content-Length": str(length), "Connection": "keep-alive",
                   "Server": "gunicorn/19.9.0", "Access-Control-Allow-Origin": "*",
                   "Access-Control-Allow-Credentials": "true", "Date": date or "Tue, 14 May 2024 09:30:00 GMT"}
        self.scenes.append({"id": chapter, "type": 1,
                            "data": {"cls": "NSHTTPURLResponse", "status": status, "url": HOST + path,
                                     "headers": headers}})

    def chunks(self, chapter, *parts):
        for part in parts:
            self.scenes.append({"id": chapter, "type": 2, "data": data(part)})

    def completion(self, chapter):
        self.scenes.append({"id": chapter, "type": 4})

    def exchange(self, method, path, body, answer, **response):
        """A request answered at once: request, response, one data scene, completion."""
        chapter = self.request(method, path, body=body,
                               headers={"Content-Type": "application/json"} if body is not None else None)
        self.response(chapter, path, length=len(answer), **response)
        self.chunks(chapter, answer)
        self.completion(chapter)

    def error(self, chapter, path, code, description, underlying=None):
        url = HOST + path
        info = {"NSLocalizedDescription": description, "NSErrorFailingURLStringKey": url,
                "NSErrorFailingURLKey": url}
        if underlying:
            info.update(underlying)
        self.scenes.append({"id": chapter, "type": 3,
                            "data": {"cls": "NSError", "domain": "NSURLErrorDomain", "code": code, "info": info}})


def get_json_response():
    tape = Tape("get-json-response")
    path = "/get?lang=swift&page=2"
    answer = httpbin_json({"args": {"lang": "swift", "page": "2"}, "headers": echoed_headers(),
                           "origin": "203.0.113.7", "url": HOST + path})
    tape.exchange("GET", path, None, answer)
    return tape


def post_json_body(name):
    tape = Tape(name)
    sent = b'{"title":"Mixtape","tracks":12}'
    answer = httpbin_json({"args": {}, "data": sent.decode(), "files": {}, "form": {},
                           "headers": echoed_headers({"Content-Type": "application/json",
                                                      "Content-Length": str(len(sent))}),
                           "json": json.loads(sent), "origin": "203.0.113.7", "url": HOST + "/post"})
    tape.exchange("POST", "/post", sent, answer)
    return tape


def get_followed_redirects():
    # URLSession followed /redirect/3 before YAHTTPVCR saw a response: the tape holds only the last answer (from
    # /get), filed under the URL the client asked for.
    tape = Tape("get-followed-redirects")
    answer = httpbin_json({"args": {}, "headers": echoed_headers(), "origin": "203.0.113.7", "url": HOST + "/get"})
    tape.exchange("GET", "/redirect/3", None, answer)
    return tape


def get_timed_out():
    tape = Tape("get-timed-out")
    path = "/delay/10"
    chapter = tape.request("GET", path, timeout=2)
    stream = {"_kCFStreamErrorDomainKey": 4, "_kCFStreamErrorCodeKey": -2102}
    cause = {"cls": "NSError", "domain": "kCFErrorDomainCFNetwork", "code": -1001, "info": dict(stream)}
    tape.error(chapter, path, -1001, "The request timed out.", dict(stream, NSUnderlyingError=cause))
    return tape


def get_cancelled():
    tape = Tape("get-cancelled")
    chapter = tape.request("GET", "/delay/10")
    tape.error(chapter, "/delay/10", -999, "cancelled")
    return tape


def get_empty_body():
    # A 200 with no bytes still gets its (empty) data scene.
    tape = Tape("get-empty-body")
    tape.exchange("GET", "/bytes/0", None, b"", content_type="application/octet-stream")
    return tape


def interleaved_slow_and_fast():
    # /delay/2 starts first; /get starts while it waits and finishes before /delay/2 answers (in two chunks).
    tape = Tape("interleaved-slow-and-fast")
    slow = tape.request("GET", "/delay/2")
    fast = tape.request("GET", "/get")
    fast_answer = httpbin_json({"args": {}, "headers": echoed_headers(), "origin": "203.0.113.7",
                                "url": HOST + "/get"})
    tape.response(fast, "/get", length=len(fast_answer), date="Tue, 14 May 2024 09:31:00 GMT")
    tape.chunks(fast, fast_answer)
    tape.completion(fast)
    slow_answer = httpbin_json({"args": {}, "data": "", "files": {}, "form": {}, "headers": echoed_headers(),
                                "origin": "203.0.113.7", "url": HOST + "/delay/2"})
    tape.response(slow, "/delay/2", length=len(slow_answer), date="Tue, 14 May 2024 09:31:02 GMT")
    half = len(slow_answer) // 2
    tape.chunks(slow, slow_answer[:half], slow_answer[half:])
    tape.completion(slow)
    return tape


def write_json(tape, name):
    # NSJSONSerialization's pretty print: two spaces, " : ", and escaped slashes.
    text = json.dumps(tape.scenes, indent=2, separators=(",", " : ")).replace("/", "\\/")
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as file:
        file.write(text)


def write_plist(tape, name):
    with open(os.path.join(HERE, name), "wb") as file:
        plistlib.dump(tape.scenes, file, fmt=plistlib.FMT_XML)


def main():
    tapes = [get_json_response(), post_json_body("post-json-body"), get_followed_redirects(), get_timed_out(),
             get_cancelled(), get_empty_body(), interleaved_slow_and_fast()]
    for tape in tapes:
        write_json(tape, tape.name + ".json")
    # The POST again as a property list, as YAHTTPVCR saves a cassette whose name does not end in .json.
    write_plist(post_json_body("post-json-body"), "post-json-body.plist")
    print(f"wrote {len(tapes) + 1} cassettes in {os.path.relpath(HERE)}")


if __name__ == "__main__":
    main()
