import Foundation

/// `/favicon.ico`, which browsers ask for on every page: a red map pin, 32×32, a PNG inside an
/// ICO (drawn for this project as an SVG path and rendered with rsvg-convert). Without it each
/// page logged a 404.
enum Favicon {
    static let bytes: [UInt8] = Array(Data(base64Encoded: base64.joined())!)

    private static let base64 = [
        "AAABAAEAICAAAAEAIADXBAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAAZiS0dEAP8A/wD/oL2n",
        "kwAABIxJREFUWIXFVltsVFUUXfs+pjOdOjNtwQCtWKQ0GIMgoj/aQDR+ESNRExMTw4dRE//8EpDgKBSCGomBmNiYgEajCfqB",
        "GvQTUz9ISC2P2OJQWtp5QHm0nee9c+85Z/tB1TL3znQGUdfn2Xuvte45+5y7gf8Z1GjB9p5lq0nqm4l4NYAlc8tXABpRSv2w",
        "byyd+FcM7FjVsVlj2sfAGgJgaiSCGmkAYCtWrmKDARDhDCR27BlLHb8jBuLd3REX1hcAPR3WNbm8OaAvDgTQpN1aWlYK1xyB",
        "iVJZlqTSARxzdful936/nr9tA/GuriXCdE+AaVVPS1C7JxQALeCZwUhaDhIFm0GcUCKwce/4+FTDBt7o7AyFm/CzRrT+oVhY",
        "bzX1msKVmHEFhmZLisGndGFsil+6ZPvladUIwkHezYQND0ZDDYsDQKtpYE2kWVPAo8IQ8Wp5vjuwbXVXly5EojMUMO9vCTUs",
        "Ph/DeQtp23EgZU/f+OWJyrjhV6QL8RoB+n3NQV/S4JJlWL71FUTXbQAAZIdOYeKzfpSnrnhyV4aDyNiOwbrxKoC36jIA4Pn2",
        "gEGVnQ4A4RXdWPvxEZjR2F9rzfeuwKJNT+H061tRujR2S36TRmgzDZoW4gU/A54eiD/Q2Qaguz1g+B5Pz7b4LeJ/woy1oufN",
        "t32/pi1gEjNWxru6PIUeA45NywAgqHn7M7DobkTWrPMVAYDo2ocRaF/kWQ/pN79FGqpjQQMEGQEAnbwbYEaiVcX/zvHujjHH",
        "Jea4axpQOqYBwGH2EFmZJFS5XFVc2TasTNKz7igFANB1nl7QwI27ll4EUM4L6SuQ/varqgbS33zpazAnFACUr7YsHauMeQz0",
        "Dw66BJy8brteBwDGP/kIUz9971mfOn4M4/0HfY1NO64k4GT/4KBbGfO9hsx8uKjUxllXIlbxCrLr4vy725H6+nPE1j8CMGP2",
        "11MoXDjvK54XEgWpdAId9Yv7GjAtPirCOJS2nZaY6f8SFhIjKCRGfGPzkbQdEGAbTex7dr7/gngmU2KmI1dsR1lSLShSDZZU",
        "uGw5SoEPx39LeRqwqgEAMNndrYitC0Xbex3qRKJoMwM2TGN3tZyqv7kTM8Vib2uMilI+2RYwEdKrevXFjCtwoWgTwPG9ieSP",
        "1fJqslpl/pDAyeFcSUrUvxESjOG8JQmYLNl0oFZuTQMHUimLlf6ipRQl8tUfoEok8jaKUmkAth5IpaxauQtOGgMz2cne1kg4",
        "J+VjEVNHWK9dcs1xkSjaIMb7fRdTny7EX9fB5ii4i4iHzuVKsljjVhSlwrlcSRLxUI6Cu+rhrsvAwdHRsit5iwRmT2cLUvi0",
        "g2DgTLYgJWjWlbzl4OhoXWdWd2vvH8tMKsZzllR8Nlvk+fugAJzNFrgkFQN4dv9YZrJe3oamzV+mcxOPt8eSllTP2IppcZMJ",
        "4Obcd9URAOPlvtHUd41wNjzuDkznTve2RkVByidcZtxwBNK2A4B39l1MH2qUr/F5G8DATG5gY1u0KStkb05IALS3bzT1zu1w",
        "/SPsXNWxZ2d3xwf/ufCdxB/0/gtoxZDRYAAAAABJRU5ErkJggg==",
    ]
}
