/// What a client sends after a redirect, as loaders and browsers do: a 303, and a 301 or 302 after a POST, become
/// a GET without a body; anything else (a 307, a 308) keeps its method and body. Reading foreign tapes' hops and
/// reporting hops to Apple's loader both follow it.
package enum RedirectRule {
    package static func becomesGet(status: Int, method: String) -> Bool {
        status == 303 || ((status == 301 || status == 302) && method.uppercased() == "POST")
    }
}
